package engine

import (
	"fmt"
	"sort"

	"github.com/tidemark-etl/tidemark/job"
)

// Options are one engine's own settings: its block in the job file
// ({duckdb: {memory_limit: 2GB}}), which the job package decodes, defaults
// and validates. Each engine defines them as a struct whose yaml tags are
// the block's keys and whose doc tags say what each key does (the
// job-file reference is generated from them).
type Options interface {
	job.Config
	// Check reports the first bad setting, naming its key.
	Check() error
}

// Env is what the runner gives an engine besides its options.
type Env struct {
	// Progress asks a Progresser engine to track the progress of its
	// statements (it may cost a little time).
	Progress bool
}

// Kind describes one engine. Its package registers it once, from its
// init, with Register; that makes it known to the job file too.
type Kind struct {
	// Name is the engine's name in the job file: "duckdb", "spark".
	Name string
	// Noun names the engine in messages and the reference: "the DuckDB
	// engine".
	Noun string
	// Options returns a pointer to a fresh block holding the defaults.
	Options func() Options
	// Open makes the engine from its block, decoded, defaulted and
	// checked. It must not change the block.
	Open func(opts Options, env Env) (Engine, error)
	// SourceOptions and SinkOptions check a source's reader options and a
	// sink's writer options for a format before a run, so that a bad
	// option is a job-file error (exit 2) rather than a failed run (nil:
	// the engine checks none).
	SourceOptions func(format string, opts map[string]any) error
	SinkOptions   func(format string, opts map[string]any) error
}

var kinds = map[string]Kind{}

// Register makes an engine available by its name, to the job file and to
// Open; called from the implementation's init. It panics on a second
// engine of the same name.
func Register(k Kind) {
	if _, ok := kinds[k.Name]; ok {
		panic(fmt.Sprintf("engine: %q registered twice", k.Name))
	}
	kinds[k.Name] = k
	job.RegisterEngine(job.Kind{Name: k.Name, Noun: k.Noun,
		New:         func() job.Config { return k.Options() },
		CheckReader: k.SourceOptions, CheckWriter: k.SinkOptions})
}

// Names lists the registered engines, sorted.
func Names() []string {
	out := make([]string, 0, len(kinds))
	for n := range kinds {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Open makes the job's engine from its block, e's Config, as the job file
// decoded it and its defaults were applied; a block left nil is the
// engine's defaults.
func Open(e job.Engine, env Env) (Engine, error) {
	k, ok := kinds[e.Name]
	if !ok {
		return nil, fmt.Errorf("engine %q is not built into this binary", e.Name)
	}
	var opts Options
	switch c := e.Config.(type) {
	case nil:
		opts = k.Options()
		opts.ApplyDefaults(nil)
	case Options:
		opts = c
	default:
		return nil, fmt.Errorf("engine %s: its block is a %T, not the engine's options (%T)", e.Name, e.Config, k.Options())
	}
	if err := opts.Check(); err != nil {
		return nil, fmt.Errorf("engine %s: %w", e.Name, err)
	}
	return k.Open(opts, env)
}

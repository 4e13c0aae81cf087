package engine

import (
	"fmt"
	"sort"

	"github.com/goccy/go-yaml"
)

// Options are one engine's own settings, from the job's engine block
// ({duckdb: {memory_limit: 2GB}}). Each engine defines them as a struct
// whose yaml tags are the block's keys and whose doc tags say what each key
// does (the job-file reference is generated from them); Factory.Options
// returns it holding the defaults.
type Options interface {
	// Check reports the first bad setting, naming its key.
	Check() error
}

// Env is what the runner gives an engine besides its options.
type Env struct {
	// Progress asks a Progresser engine to track the progress of its
	// statements (it may cost a little time).
	Progress bool
}

// Decoder fills v, a pointer to an engine's Options holding the defaults,
// from the job's engine block, failing on keys v does not have. A nil
// Decoder stands for a block without options.
type Decoder func(v any) error

// Factory is how an engine is made.
type Factory struct {
	// Options returns a pointer to a fresh Options value holding the
	// defaults.
	Options func() Options
	// Open makes the engine from Options's value, filled and validated.
	Open func(opts Options, env Env) (Engine, error)
}

var factories = map[string]Factory{}

// Register makes an engine available by name ("duckdb", "spark"); called
// from the implementation's init.
func Register(name string, f Factory) { factories[name] = f }

// Names lists the registered engines, sorted.
func Names() []string {
	out := make([]string, 0, len(factories))
	for n := range factories {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func factory(name string) (Factory, error) {
	f, ok := factories[name]
	if !ok {
		return Factory{}, fmt.Errorf("engine %q is not built into this binary", name)
	}
	return f, nil
}

// DefaultOptions returns the named engine's options holding the defaults
// (for the job-file reference and for decoders).
func DefaultOptions(name string) (Options, error) {
	f, err := factory(name)
	if err != nil {
		return nil, err
	}
	return f.Options(), nil
}

// DecodeOptions returns the named engine's options: the defaults, filled
// by decode, validated.
func DecodeOptions(name string, decode Decoder) (Options, error) {
	opts, err := DefaultOptions(name)
	if err != nil {
		return nil, err
	}
	if decode != nil {
		if err := decode(opts); err != nil {
			return nil, fmt.Errorf("engine %s: %w", name, err)
		}
	}
	if err := opts.Check(); err != nil {
		return nil, fmt.Errorf("engine %s: %w", name, err)
	}
	return opts, nil
}

// New makes the named engine from its options block.
func New(name string, decode Decoder, env Env) (Engine, error) {
	opts, err := DecodeOptions(name, decode)
	if err != nil {
		return nil, err
	}
	return factories[name].Open(opts, env)
}

// MapDecoder decodes options from keys and values (as a job file's block
// holds them), failing on unknown keys.
func MapDecoder(m map[string]any) Decoder {
	return func(v any) error {
		if len(m) == 0 {
			return nil
		}
		data, err := yaml.Marshal(m)
		if err != nil {
			return fmt.Errorf("encoding options: %w", err)
		}
		if err := yaml.UnmarshalWithOptions(data, v, yaml.Strict()); err != nil {
			return fmt.Errorf("decoding options: %w", err)
		}
		return nil
	}
}

// ValueDecoder decodes options from v, a value with the same keys (the
// job file's engine block as its component decoded it).
func ValueDecoder(v any) Decoder {
	return func(into any) error {
		if v == nil {
			return nil
		}
		data, err := yaml.Marshal(v)
		if err != nil {
			return fmt.Errorf("encoding options: %w", err)
		}
		if err := yaml.UnmarshalWithOptions(data, into, yaml.Strict()); err != nil {
			return fmt.Errorf("decoding options: %w", err)
		}
		return nil
	}
}

// OptionChecker checks a job's reader and writer options before a run, so
// a bad option is a job-file error (exit 2) rather than a failed run.
type OptionChecker struct {
	Source func(format string, opts map[string]any) error
	Sink   func(format string, opts map[string]any) error
}

var checkers = map[string]OptionChecker{}

// RegisterOptions registers the named engine's option checks.
func RegisterOptions(name string, c OptionChecker) { checkers[name] = c }

// CheckOptions returns the named engine's option checks (zero if none).
func CheckOptions(name string) OptionChecker { return checkers[name] }

package job

import (
	"maps"
	"slices"
	"strings"

	"github.com/tidemark-etl/tidemark/internal/secret"
	"github.com/tidemark-etl/tidemark/objstore"
)

// CheckOptions has each component check its part of the job file: the
// engine every reader and writer option, the object store every s3:
// setting. It returns every error at once, each with its key and line.
// Validate includes these checks; a component that is not linked into the
// program checks nothing.
func (s *Spec) CheckOptions() error {
	v := validator{s: s}
	v.blocks()
	if len(v.errs) > 0 {
		return v.errs
	}
	return nil
}

// readerCheck and writerCheck are the job's engine's checks of reader and
// writer options (nil: the engine checks none).
func (v *validator) readerCheck() func(string, map[string]any) error {
	k, _ := engineKinds.byName(v.s.Engine.Name)
	return k.CheckReader
}

func (v *validator) writerCheck() func(string, map[string]any) error {
	k, _ := engineKinds.byName(v.s.Engine.Name)
	return k.CheckWriter
}

// s3Settings checks a source's or sink's s3: settings. A secret (a
// secret-named setting, an endpoint with user info) is refused without
// being echoed.
func (v *validator) s3Settings(p string, opts map[string]string) {
	for _, name := range slices.Sorted(maps.Keys(opts)) {
		key := p + ".s3." + name
		if secret.IsSecretKey(name) {
			v.fail(key, "\"%s: %s\" is not an S3 setting, and a secret does not belong in the job file; %s", name, secret.Mask, awsChain)
			continue
		}
		if v.noSecret(key, opts[name], awsChain) {
			continue
		}
		if err := objstore.CheckOption("s3", name, opts[name]); err != nil {
			v.fail(key, "%s", strings.TrimPrefix(err.Error(), "s3 option "+name+": "))
		}
	}
}

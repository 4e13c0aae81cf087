package job

import "fmt"

// ValidateSource checks a source made in code for a run that declares its
// sources as it goes (a tidemark.Session): its ctx and its kind's block, as
// Validate checks a job file's. Reader options are the program's own and
// are not given to the job's engine to check.
func (s *Spec) ValidateSource(src Source) error {
	v := validator{s: s}
	if !identRE.MatchString(src.Ctx) {
		v.fail("$.source.ctx", "%q must be an identifier (letters, digits, '_')", src.Ctx)
	}
	for _, other := range s.Sources {
		if other.Ctx == src.Ctx {
			v.fail("$.source.ctx", "source %q is defined twice", src.Ctx)
		}
	}
	v.block(sourceKinds, fmt.Sprintf("$.source[%s]", src.Ctx), src.Config, false)
	return v.result()
}

// ValidateSink checks a sink made in code, as ValidateSource a source.
func (s *Spec) ValidateSink(k Sink) error {
	v := validator{s: s}
	if !identRE.MatchString(k.Ctx) {
		v.fail("$.sink.ctx", "%q must be an identifier (letters, digits, '_')", k.Ctx)
	}
	for _, other := range s.Sinks {
		if other.Ctx == k.Ctx {
			v.fail("$.sink.ctx", "sink %q is defined twice", k.Ctx)
		}
	}
	v.block(sinkKinds, fmt.Sprintf("$.sink[%s]", k.Ctx), k.Config, false)
	return v.result()
}

// result is the validator's errors, sorted, or nil.
func (v *validator) result() error {
	if len(v.errs) == 0 {
		return nil
	}
	sortErrors(v.errs)
	return v.errs
}

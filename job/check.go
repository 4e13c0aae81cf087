package job

import (
	"slices"
	"strings"
)

// Check collects the problems of one block (a source, a sink, the engine)
// for its Config.Validate. Keys are relative to the block ("format",
// "include[0]", "" for the block itself); each problem becomes an *Error
// with the key's full path and line. The checks shared by several kinds
// (secrets, connection strings, s3: settings, the engine's reader and
// writer options) are methods here so that every kind says them alike.
type Check struct {
	v    *validator
	path string // "$.sources[0]"
	// options mutes every check but the components' (reader and writer
	// options, s3: settings), for Spec.CheckOptions.
	options bool
}

// Spec is the job the block belongs to, its defaults applied.
func (c *Check) Spec() *Spec { return c.v.s }

func (c *Check) key(k string) string {
	switch {
	case k == "":
		return c.path
	case strings.HasPrefix(k, "["):
		return c.path + k
	}
	return c.path + "." + k
}

// Fail reports a problem at key.
func (c *Check) Fail(key, format string, args ...any) {
	if !c.options {
		c.v.fail(c.key(key), format, args...)
	}
}

// OneOf reports got at key unless it is one of allowed.
func (c *Check) OneOf(key, got string, allowed []string) {
	if !c.options {
		c.v.oneOf(c.key(key), got, allowed)
	}
}

// Positive reports a negative n at key.
func (c *Check) Positive(key string, n int64) {
	if n < 0 {
		c.Fail(key, "must be positive")
	}
}

// Duration reports a duration at key that could not be parsed.
func (c *Check) Duration(key string, d Duration) {
	if d.err != nil {
		c.Fail(key, "%v", d.err)
	}
}

// Size reports a size at key that could not be parsed, or a negative one.
func (c *Check) Size(key string, z Size) {
	if z.err != nil {
		c.Fail(key, "%v", z.err)
	}
	c.Positive(key, z.Bytes)
}

// Location checks a source's or sink's path (at key) for credentials in
// a URL and a local path starting with ~.
func (c *Check) Location(key, path string) {
	if !c.options {
		c.v.noSecretInPath(c.key(key), path)
	}
}

// Connection checks the block's connection: string (key "connection"):
// no secret inline, and one of the kind's connection URL forms (schemes:
// "postgres://", "sqlite:").
func (c *Check) Connection(conn string, schemes []string) {
	if !c.options {
		c.v.connection(c.path, conn, schemes)
	}
}

// NoSecret reports a value at key that holds a secret inline (masked),
// saying where it belongs instead; it reports whether it did.
func (c *Check) NoSecret(key, value, instead string) bool {
	return !c.options && c.v.noSecret(c.key(key), value, instead)
}

// S3 checks the block's s3: settings (key "s3") against the object store.
func (c *Check) S3(opts map[string]string) { c.v.s3Settings(c.path, opts) }

// ReaderOptions has the job's engine check a source's format and reader
// options (key "options").
func (c *Check) ReaderOptions(format string, opts map[string]any) {
	if f := c.v.readerCheck(); f != nil && !c.failed("format") {
		if err := f(format, opts); err != nil {
			c.v.fail(c.key("options"), "%v", err)
		}
	}
}

// WriterOptions has the job's engine check a sink's format and writer
// options (key "options").
func (c *Check) WriterOptions(format string, opts map[string]any) {
	if f := c.v.writerCheck(); f != nil && !c.failed("format") {
		if err := f(format, opts); err != nil {
			c.v.fail(c.key("options"), "%v", err)
		}
	}
}

// failed reports whether a problem was reported at key: a format the kind
// refused is not checked again by the engine (one message for one
// mistake).
func (c *Check) failed(key string) bool {
	p := strings.TrimPrefix(c.key(key), "$.")
	return slices.ContainsFunc(c.v.errs, func(e *Error) bool { return e.Key == p })
}

// IsLocal reports whether a source or sink path is on a local disk.
func IsLocal(path string) bool { return isLocal(path) }

// Identifier reports whether s is a plain SQL identifier (letters, digits,
// '_'), as view and column names must be.
func Identifier(s string) bool { return identRE.MatchString(s) }

// IsSet reports whether the duration was written in the job file (not a
// default).
func (d Duration) IsSet() bool { return d.set }

// S3Settings checks the s3: settings under key (key "targets[0]" checks
// "targets[0].s3"), as S3 does for the block's own.
func (c *Check) S3Settings(key string, opts map[string]string) { c.v.s3Settings(c.key(key), opts) }

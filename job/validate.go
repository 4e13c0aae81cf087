package job

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/tidemark-etl/tidemark/bookmark"
)

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Validate checks the spec after defaults were applied. It returns every
// error it finds, as Errors.
func (s *Spec) Validate() error {
	v := validator{s: s}
	if s.Job == "" {
		v.fail("$.job", "is required")
	} else if !regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`).MatchString(s.Job) {
		v.fail("$.job", "%q: use letters, digits, '_', '-' and '.'", s.Job)
	}
	// Checked whatever its form: a key=value connection string or a DSN
	// given as state: would otherwise be taken as a SQLite file's path,
	// and the password would become a file name.
	if !v.noSecret("$.state", s.State, stateHint(s.State)) && isLocal(s.State) {
		v.noTilde("$.state", s.State)
	}
	v.noSecret("$.engine.spark.remote", s.Engine.Remote, "a Spark Connect token or password does not belong in the job file")
	if _, err := bookmark.ParseMode(s.Bookmark); err != nil {
		v.fail("$.bookmark", "%v", err)
	}
	v.oneOf("$.engine", s.Engine.Name, Engines)
	if s.Engine.Name == "spark" && s.Engine.Remote == "" {
		v.fail("$.engine.spark.remote", "is required (e.g. sc://host:15002)")
	}
	if s.Engine.Threads < 0 {
		v.fail("$.engine", "threads must be positive")
	}
	v.oneOf("$.on_bad_record", s.OnBadRecord, OnBadRecords)
	if s.IO.Concurrency < 0 {
		v.fail("$.io.concurrency", "must be positive")
	}
	if s.IO.DiskBudget.err != nil {
		v.fail("$.io.disk_budget", "%v", s.IO.DiskBudget.err)
	}
	if len(s.Sources) == 0 {
		v.fail("$.sources", "at least one source is required")
	}
	names := map[string]string{}
	name := func(p, n, what string) {
		if !identRE.MatchString(n) {
			v.fail(p, "%s %q must be an identifier (letters, digits, '_'), it names a SQL view", what, n)
			return
		}
		if prev, ok := names[strings.ToLower(n)]; ok {
			v.fail(p, "%q is already used by %s", n, prev)
			return
		}
		names[strings.ToLower(n)] = what + " " + n
	}
	for i, src := range s.Sources {
		p := fmt.Sprintf("$.sources[%d]", i)
		if src.Ctx == "" {
			v.fail(p+".ctx", "is required")
		} else {
			name(p+".ctx", src.Ctx, "source")
		}
		if src.IsTable() {
			v.tableSource(p, src)
			continue
		}
		if src.Path == "" {
			v.fail(p+".path", "is required (or connection: and table: for a SQL table)")
		}
		v.noSecretInPath(p+".path", src.Path)
		v.oneOf(p+".format", src.Format, InputFormats)
		v.oneOf(p+".tracking", src.Tracking, Trackings)
		v.oneOf(p+".on_modified", src.OnModified, OnModifieds)
		v.oneOf(p+".on_bad_record", src.OnBadRecord, OnBadRecords)
		v.oneOf(p+".listing", src.Listing, Listings)
		if src.Listing == "ordered" && src.Tracking != "exact" {
			v.fail(p+".listing", "ordered listing needs tracking: exact")
		}
		if src.Listing == "ordered" && isLocal(src.Path) {
			v.fail(p+".listing", "ordered listing is for S3 prefixes whose keys sort in arrival order; a local folder is always listed in full")
		}
		if src.MaxBand.set && src.Tracking != "timestamp" {
			v.fail(p+".max_band", "is a setting of tracking: timestamp; this source has tracking: %s", src.Tracking)
		}
		if src.BoundedFiles < 0 {
			v.fail(p+".bounded_files", "must be positive")
		}
		if src.MaxBand.err != nil {
			v.fail(p+".max_band", "%v", src.MaxBand.err)
		}
		if src.BoundedSize.err != nil {
			v.fail(p+".bounded_size", "%v", src.BoundedSize.err)
		}
		if src.BoundedSize.Bytes < 0 {
			v.fail(p+".bounded_size", "must be positive")
		}
		if src.MaxBand.Duration < 0 {
			v.fail(p+".max_band", "must be positive")
		}
		if src.MaxFilesInBand < 0 {
			v.fail(p+".max_files_in_band", "must be positive")
		}
		for j, g := range append(slices.Clone(src.Include), src.Exclude...) {
			key := fmt.Sprintf("%s.include[%d]", p, j)
			if j >= len(src.Include) {
				key = fmt.Sprintf("%s.exclude[%d]", p, j-len(src.Include))
			}
			if _, err := filepath.Match(strings.ReplaceAll(g, "**", "*"), ""); err != nil {
				v.fail(key, "bad glob %q: %v", g, err)
			}
		}
	}
	for i, t := range s.Transforms {
		p := fmt.Sprintf("$.transforms")
		n, ok := t.Key.(string)
		if !ok {
			v.fail(p, "transform names must be strings")
			continue
		}
		name(p+"."+n, n, "transform")
		if sql, ok := t.Value.(string); !ok || strings.TrimSpace(sql) == "" {
			v.fail(p+"."+n, "transform %d (%s) must be a SQL query string", i+1, n)
		}
	}
	if len(s.Sinks) == 0 {
		v.fail("$.sinks", "at least one sink is required")
	}
	sinkNames := map[string]bool{}
	for i, k := range s.Sinks {
		p := fmt.Sprintf("$.sinks[%d]", i)
		if k.Ctx == "" {
			v.fail(p+".ctx", "is required")
		} else if !identRE.MatchString(k.Ctx) {
			v.fail(p+".ctx", "%q must be an identifier (letters, digits, '_')", k.Ctx)
		} else if sinkNames[k.Ctx] {
			v.fail(p+".ctx", "sink %q is defined twice", k.Ctx)
		}
		sinkNames[k.Ctx] = true
		if k.IsTable() {
			if k.Path != "" {
				v.fail(p+".path", "a sink has either path: or connection:, not both")
			}
			v.connection(p, k.Connection)
			if k.Table == "" {
				v.fail(p+".table", "is required with connection:")
			}
			v.oneOf(p+".mode", k.Mode, TableSinkModes)
			if k.Mode == "merge" && len(k.MergeKeys) == 0 {
				v.fail(p+".merge_keys", "mode merge needs merge_keys")
			}
		} else {
			if k.Path == "" {
				v.fail(p+".path", "is required (or connection: and table: for a SQL table)")
			}
			v.noSecretInPath(p+".path", k.Path)
			v.oneOf(p+".format", k.Format, OutputFormats)
			v.oneOf(p+".mode", k.Mode, SinkModes)
		}
		if k.From == "" {
			v.fail(p+".from", "is required when there are several sources and no transforms")
		} else if _, ok := names[strings.ToLower(k.From)]; !ok {
			v.fail(p+".from", "%q is neither a source ctx nor a transform", k.From)
		}
		if k.Mode == "overwrite_partitions" && len(k.PartitionBy) == 0 {
			v.fail(p+".mode", "overwrite_partitions needs partition_by")
		}
		for j, c := range k.PartitionBy {
			if !identRE.MatchString(c) {
				v.fail(fmt.Sprintf("%s.partition_by[%d]", p, j), "%q must be a column name", c)
			}
		}
	}
	v.options()
	if len(v.errs) > 0 {
		sortErrors(v.errs)
		return v.errs
	}
	return nil
}

type validator struct {
	s    *Spec
	errs Errors
}

func (v *validator) fail(path, format string, args ...any) {
	line := 0
	if v.s.lines != nil {
		line = v.s.lines(path)
	}
	v.errs = append(v.errs, &Error{File: v.s.File, Line: line, Key: strings.TrimPrefix(path, "$."), Msg: fmt.Sprintf(format, args...)})
}

func (v *validator) oneOf(path, got string, allowed []string) {
	if !slices.Contains(allowed, got) {
		v.fail(path, "%q is not one of %s", got, strings.Join(allowed, ", "))
	}
}

// tableSource checks a SQL table source.
func (v *validator) tableSource(p string, src Source) {
	if src.Path != "" {
		v.fail(p+".path", "a source has either path: or connection:, not both")
	}
	if src.AllowMissing {
		v.fail(p+".allow_missing", "is for file sources (path:), not SQL tables")
	}
	if (src.Table == "") == (src.Query == "") {
		v.fail(p+".table", "give exactly one of table: or query:")
	}
	v.connection(p, src.Connection)
	if src.BookmarkKeysSortOrder != "" {
		v.oneOf(p+".bookmark_keys_sort_order", src.BookmarkKeysSortOrder, []string{"asc", "desc"})
	}
	if src.OnNullKey != "" {
		v.oneOf(p+".on_null_key", src.OnNullKey, []string{"fail", "skip"})
	}
	if src.BoundedRows < 0 {
		v.fail(p+".bounded_rows", "must be positive")
	}
	if src.RegressionCheckRows != nil && *src.RegressionCheckRows < 0 {
		v.fail(p+".regression_check_rows", "must be 0 (every row) or more")
	}
}

// ErrorAt returns a job-file error for the key at a YAML path such as
// "$.sources[0].options", with its line.
func (s *Spec) ErrorAt(path, format string, args ...any) *Error {
	v := validator{s: s}
	v.fail(path, format, args...)
	return v.errs[0]
}

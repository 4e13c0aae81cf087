package spark

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dustin/go-humanize"
)

// opt maps one job-file option to Spark's: name is Spark's option name;
// enum, when set, lists the accepted values (lower case), values maps some
// of them to Spark's spelling; size says the value is a byte count;
// ignore says the option has no Spark counterpart and is accepted without
// effect (inference-only hints of the DuckDB engine, a compression Spark
// tells from the file name).
type opt struct {
	name   string
	enum   []string
	values map[string]string
	size   bool
	ignore bool
}

var readOpts = map[string]map[string]opt{
	"csv": {
		"header":           {name: "header"},
		"delim":            {name: "sep"},
		"sep":              {name: "sep"},
		"delimiter":        {name: "sep"},
		"quote":            {name: "quote"},
		"escape":           {name: "escape"},
		"comment":          {name: "comment"},
		"nullstr":          {name: "nullValue"},
		"dateformat":       {name: "dateFormat"},
		"date_format":      {name: "dateFormat"},
		"timestampformat":  {name: "timestampFormat"},
		"timestamp_format": {name: "timestampFormat"},
		"encoding":         {name: "encoding"},
		"max_line_size":    {name: "maxCharsPerColumn", size: true},
		"compression":      {ignore: true, enum: []string{"auto", "none", "gzip", "zstd"}},
		"sample_size":      {ignore: true},
		"parallel":         {ignore: true},
		// What tidemark's own extracts of SQL tables say (source/sqltable):
		// Spark's defaults already read them so.
		"skip":               {ignore: true, enum: []string{"0"}},
		"new_line":           {ignore: true, enum: []string{`\n`}},
		"allow_quoted_nulls": {ignore: true, enum: []string{"false"}},
		"buffer_size":        {ignore: true},
	},
	"json": {
		"dateformat":       {name: "dateFormat"},
		"date_format":      {name: "dateFormat"},
		"timestampformat":  {name: "timestampFormat"},
		"timestamp_format": {name: "timestampFormat"},
		"compression":      {ignore: true, enum: []string{"auto", "none", "gzip", "zstd"}},
		"sample_size":      {ignore: true},
	},
	"parquet": {},
}

var writeOpts = map[string]map[string]opt{
	"parquet": {
		"compression": {name: "compression", enum: []string{"snappy", "zstd", "gzip", "none", "uncompressed", "lz4", "lz4_raw", "brotli"},
			values: map[string]string{"none": "none", "uncompressed": "uncompressed"}},
		"row_group_size":       {name: "parquet.block.row.count.limit"},
		"row_group_size_bytes": {name: "parquet.block.size", size: true},
		"max_records_per_file": {name: "maxRecordsPerFile"},
		"per_thread_output":    {ignore: true},
	},
	"csv": {
		"header":               {name: "header"},
		"delim":                {name: "sep"},
		"sep":                  {name: "sep"},
		"delimiter":            {name: "sep"},
		"quote":                {name: "quote"},
		"escape":               {name: "escape"},
		"nullstr":              {name: "nullValue"},
		"dateformat":           {name: "dateFormat"},
		"timestampformat":      {name: "timestampFormat"},
		"compression":          {name: "compression", enum: []string{"none", "gzip", "zstd"}},
		"max_records_per_file": {name: "maxRecordsPerFile"},
		"per_thread_output":    {ignore: true},
	},
	"json": {
		"compression":          {name: "compression", enum: []string{"none", "gzip", "zstd"}},
		"max_records_per_file": {name: "maxRecordsPerFile"},
		"per_thread_output":    {ignore: true},
	},
}

// unsupported names options the DuckDB engine takes that Spark cannot
// honour, with what to use instead.
var unsupported = map[string]string{
	"file_size_bytes":   "Spark splits output by rows: use max_records_per_file",
	"compression_level": "Spark's writers take no compression level",
	"parquet_version":   "Spark writes Parquet format v1 pages",
}

// sparkOpts checks opts against table[format] and returns Spark's options.
func sparkOpts(table map[string]map[string]opt, what, format string, opts map[string]any) (map[string]string, error) {
	known, ok := table[format]
	if !ok {
		return nil, fmt.Errorf("format %q: want csv, json or parquet", format)
	}
	out := map[string]string{}
	for _, k := range sortedKeys(opts) {
		o, ok := known[strings.ToLower(k)]
		if !ok {
			if why, ok := unsupported[strings.ToLower(k)]; ok {
				return nil, fmt.Errorf("%s option %s: not supported on the spark engine (%s)", what, k, why)
			}
			return nil, fmt.Errorf("%s option %s: not a %s option of the spark engine (known: %s)", what, k, format, strings.Join(sortedKeys(known), ", "))
		}
		v, err := optText(opts[k], o)
		if err != nil {
			return nil, fmt.Errorf("%s option %s: %w", what, k, err)
		}
		if o.ignore {
			continue
		}
		out[o.name] = v
	}
	return out, nil
}

func optText(v any, o opt) (string, error) {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case bool:
		s = strconv.FormatBool(x)
	case int:
		s = strconv.Itoa(x)
	case int64:
		s = strconv.FormatInt(x, 10)
	case uint64:
		s = strconv.FormatUint(x, 10)
	case float64:
		if x != math.Trunc(x) {
			return "", fmt.Errorf("want a whole number, got %v", x)
		}
		s = strconv.FormatInt(int64(x), 10)
	case []any:
		if len(x) != 1 {
			return "", fmt.Errorf("the spark engine takes one value, got %d", len(x))
		}
		return optText(x[0], o)
	default:
		return "", fmt.Errorf("want a text, number or true/false, got %T", v)
	}
	if o.size {
		n, err := humanize.ParseBytes(s)
		if err != nil {
			return "", fmt.Errorf("want a size such as 128MB, got %q", s)
		}
		s = strconv.FormatUint(n, 10)
	}
	if o.enum != nil {
		low := strings.ToLower(s)
		if !slices.Contains(o.enum, low) {
			return "", fmt.Errorf("want one of %s, got %q", strings.Join(o.enum, ", "), s)
		}
		s = low
		if m, ok := o.values[low]; ok {
			s = m
		}
	}
	return s, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// readerOpts are Spark's reader options for a source: dates are parsed
// whole (see below); CSV has a header
// unless the job says otherwise (the DuckDB engine detects it; Spark
// cannot), and a header is checked against the schema's names.
func readerOpts(format string, opts map[string]any) (map[string]string, error) {
	out, err := sparkOpts(readOpts, "reader", format, opts)
	if err != nil {
		return nil, err
	}
	if format != "parquet" {
		if _, ok := out["dateFormat"]; !ok {
			// Spark's default date parsing drops what follows a date
			// (2026-01-02 10:30:00 is read as 2026-01-02); a pattern of
			// the date alone, with no fallback to that parsing, makes
			// such a value a bad record, as on the DuckDB engine.
			out["dateFormat"] = "yyyy-M-d"
		}
		out["enableDateTimeParsingFallback"] = "false"
	}
	if format == "csv" {
		csvEscape(out)
		if _, ok := out["header"]; !ok {
			out["header"] = "true"
		}
		if out["header"] == "true" {
			out["enforceSchema"] = "false"
		}
	}
	return out, nil
}

// writerOpts are Spark's writer options for a sink (CSV with a header
// unless the job says otherwise, as the DuckDB engine writes it).
func writerOpts(format string, opts map[string]any) (map[string]string, error) {
	out, err := sparkOpts(writeOpts, "writer", format, opts)
	if err != nil {
		return nil, err
	}
	if format == "csv" {
		csvEscape(out)
		if _, ok := out["header"]; !ok {
			out["header"] = "true"
		}
		// Spark's CSV writer trims the texts it writes by default.
		out["ignoreLeadingWhiteSpace"] = "false"
		out["ignoreTrailingWhiteSpace"] = "false"
	}
	if format == "json" {
		// A NULL is written as null, as the DuckDB engine writes it, not
		// left out.
		out["ignoreNullFields"] = "false"
	}
	return out, nil
}

// csvEscape makes a quote inside a quoted CSV field a doubled quote
// (RFC 4180, DuckDB's default: escape is the quote) unless the job names
// an escape; Spark's own default, a backslash, reads `"a ""b"""` as the
// text `"a ""b"""` and writes `"a \"b\""`.
func csvEscape(out map[string]string) {
	if _, ok := out["escape"]; ok {
		return
	}
	out["escape"] = `"`
	if q, ok := out["quote"]; ok {
		out["escape"] = q
	}
}

// ValidateSourceOptions checks a source's format and reader options.
func ValidateSourceOptions(format string, opts map[string]any) error {
	_, err := readerOpts(format, opts)
	return err
}

// ValidateSinkOptions checks a sink's format and writer options.
func ValidateSinkOptions(format string, opts map[string]any) error {
	_, err := writerOpts(format, opts)
	return err
}

package duckdb

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// kind is the shape of an option's value.
type kind int

const (
	kBool     kind = iota
	kInt           // integer (YAML may give it as a float without fraction)
	kString        // any text
	kSize          // integer bytes or text such as "128MB"
	kList          // list of text
	kTextList      // text or list of text (nullstr)
	kTypeMap       // {column: TYPE}
	kEnum          // one of spec.enum, case-insensitive
)

// optSpec describes one option a job file may pass through.
type optSpec struct {
	kind kind
	enum []string
	// inferOnly options steer schema inference and are not passed to the
	// reads that apply a known schema (DuckDB refuses e.g. types together
	// with columns).
	inferOnly bool
	// alias is the DuckDB name to use when the job file spells it otherwise.
	alias string
}

var compressionRead = []string{"auto", "none", "gzip", "zstd"}

// readerOptions lists, per source format, the options passed to DuckDB's
// reader. Options the engine controls itself (columns, auto_detect,
// ignore_errors, store_rejects, filename, hive_*, union_by_name) are absent
// on purpose: setting them would break schema stability or row counting.
var readerOptions = map[string]map[string]optSpec{
	"csv": {
		"header":               {kind: kBool},
		"delim":                {kind: kString},
		"sep":                  {kind: kString, alias: "delim"},
		"delimiter":            {kind: kString, alias: "delim"},
		"quote":                {kind: kString},
		"escape":               {kind: kString},
		"new_line":             {kind: kEnum, enum: []string{`\n`, `\r\n`, `\r`}},
		"comment":              {kind: kString},
		"skip":                 {kind: kInt},
		"nullstr":              {kind: kTextList},
		"dateformat":           {kind: kString},
		"date_format":          {kind: kString, alias: "dateformat"},
		"timestampformat":      {kind: kString},
		"timestamp_format":     {kind: kString, alias: "timestampformat"},
		"decimal_separator":    {kind: kString},
		"thousands":            {kind: kString},
		"allow_quoted_nulls":   {kind: kBool},
		"force_not_null":       {kind: kList},
		"strict_mode":          {kind: kBool},
		"null_padding":         {kind: kBool},
		"max_line_size":        {kind: kSize},
		"encoding":             {kind: kEnum, enum: []string{"utf-8", "utf-16", "latin-1"}},
		"buffer_size":          {kind: kInt},
		"parallel":             {kind: kBool},
		"compression":          {kind: kEnum, enum: compressionRead},
		"sample_size":          {kind: kInt, inferOnly: true},
		"types":                {kind: kTypeMap, inferOnly: true},
		"dtypes":               {kind: kTypeMap, inferOnly: true, alias: "types"},
		"column_types":         {kind: kTypeMap, inferOnly: true, alias: "types"},
		"all_varchar":          {kind: kBool, inferOnly: true},
		"auto_type_candidates": {kind: kList, inferOnly: true},
		"normalize_names":      {kind: kBool, inferOnly: true},
		"names":                {kind: kList, inferOnly: true},
		"column_names":         {kind: kList, inferOnly: true, alias: "names"},
	},
	"json": {
		"dateformat":                  {kind: kString},
		"date_format":                 {kind: kString, alias: "dateformat"},
		"timestampformat":             {kind: kString},
		"timestamp_format":            {kind: kString, alias: "timestampformat"},
		"compression":                 {kind: kEnum, enum: compressionRead},
		"maximum_object_size":         {kind: kInt},
		"sample_size":                 {kind: kInt, inferOnly: true},
		"maximum_depth":               {kind: kInt, inferOnly: true},
		"map_inference_threshold":     {kind: kInt, inferOnly: true},
		"convert_strings_to_integers": {kind: kBool, inferOnly: true},
	},
	"parquet": {
		"binary_as_string": {kind: kBool},
	},
}

// writerOptions lists, per sink format, the COPY options a job may set.
var writerOptions = map[string]map[string]optSpec{
	"parquet": {
		"compression":          {kind: kEnum, enum: []string{"snappy", "zstd", "gzip", "none", "uncompressed", "lz4", "lz4_raw", "brotli"}},
		"compression_level":    {kind: kInt},
		"row_group_size":       {kind: kInt},
		"row_group_size_bytes": {kind: kSize},
		"file_size_bytes":      {kind: kSize},
		"per_thread_output":    {kind: kBool},
		"parquet_version":      {kind: kEnum, enum: []string{"v1", "v2"}},
	},
	"csv": {
		"header":            {kind: kBool},
		"delim":             {kind: kString},
		"sep":               {kind: kString, alias: "delim"},
		"delimiter":         {kind: kString, alias: "delim"},
		"quote":             {kind: kString},
		"escape":            {kind: kString},
		"nullstr":           {kind: kString},
		"dateformat":        {kind: kString},
		"timestampformat":   {kind: kString},
		"force_quote":       {kind: kList},
		"compression":       {kind: kEnum, enum: []string{"none", "gzip", "zstd"}},
		"file_size_bytes":   {kind: kSize},
		"per_thread_output": {kind: kBool},
	},
	"json": {
		"compression":       {kind: kEnum, enum: []string{"none", "gzip", "zstd"}},
		"file_size_bytes":   {kind: kSize},
		"per_thread_output": {kind: kBool},
	},
}

// option is one validated option, ready to render.
type option struct {
	name  string // DuckDB's name, lower case
	spec  optSpec
	value any // bool, int64, string, []string or [][2]string (type map)
}

// options is a validated option set, keyed by DuckDB name.
type options map[string]option

func (o options) has(name string) bool { _, ok := o[name]; return ok }

func (o options) str(name string) (string, bool) {
	v, ok := o[name]
	if !ok {
		return "", false
	}
	s, ok := v.value.(string)
	return s, ok
}

func (o options) boolean(name string, def bool) bool {
	if v, ok := o[name]; ok {
		if b, ok := v.value.(bool); ok {
			return b
		}
	}
	return def
}

// sortedNames returns the option names in a stable order, so generated SQL
// (and therefore errors and plans) do not vary from run to run.
func (o options) sortedNames() []string {
	names := make([]string, 0, len(o))
	for n := range o {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// ValidateSourceOptions checks a source's format and reader options without
// running anything, so a job file can be rejected before a run starts.
func ValidateSourceOptions(format string, opts map[string]any) error {
	_, err := parseOptions(readerOptions, format, opts)
	return err
}

// ValidateSinkOptions checks a sink's format and COPY options likewise.
func ValidateSinkOptions(format string, opts map[string]any) error {
	_, err := parseOptions(writerOptions, format, opts)
	return err
}

func parseOptions(table map[string]map[string]optSpec, format string, raw map[string]any) (options, error) {
	specs, ok := table[format]
	if !ok {
		known := make([]string, 0, len(table))
		for f := range table {
			known = append(known, f)
		}
		slices.Sort(known)
		return nil, fmt.Errorf("format %q is not one of %s", format, strings.Join(known, ", "))
	}
	out := options{}
	for key, v := range raw {
		name := strings.ToLower(key)
		spec, ok := specs[name]
		if !ok {
			return nil, fmt.Errorf("option %q is not supported for %s (supported: %s)", key, format, supportedList(specs))
		}
		value, err := convert(spec, v)
		if err != nil {
			return nil, fmt.Errorf("option %s: %w", key, err)
		}
		if spec.alias != "" {
			name = spec.alias
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("option %s is given twice (under another spelling)", key)
		}
		out[name] = option{name: name, spec: spec, value: value}
	}
	return out, nil
}

func supportedList(specs map[string]optSpec) string {
	names := make([]string, 0, len(specs))
	for n := range specs {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// typeName is what a DuckDB type in a types map may look like: letters,
// digits, spaces, parentheses, commas, brackets and quoted field names.
var typeName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_ (),\[\]"]*$`)

// sizeText is a byte size DuckDB understands, e.g. 128MB or "1.5 GiB".
var sizeText = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?\s*[A-Za-z]{0,3}$`)

func convert(spec optSpec, v any) (any, error) {
	switch spec.kind {
	case kBool:
		switch x := v.(type) {
		case bool:
			return x, nil
		case string:
			if b, err := strconv.ParseBool(x); err == nil {
				return b, nil
			}
		}
		return nil, fmt.Errorf("want true or false, got %v", v)
	case kInt:
		n, ok := toInt(v)
		if !ok {
			return nil, fmt.Errorf("want an integer, got %v", v)
		}
		return n, nil
	case kSize:
		if n, ok := toInt(v); ok && n > 0 {
			return n, nil
		}
		if s, ok := v.(string); ok && sizeText.MatchString(strings.TrimSpace(s)) {
			return strings.TrimSpace(s), nil
		}
		return nil, fmt.Errorf("want a byte size such as 134217728 or \"128MB\", got %v", v)
	case kString:
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("want text, got %v", v)
		}
		return s, checkText("value", s)
	case kEnum:
		s, ok := v.(string)
		if ok {
			for _, e := range spec.enum {
				if strings.EqualFold(s, e) {
					return e, nil
				}
			}
		}
		return nil, fmt.Errorf("want one of %s, got %v", strings.Join(spec.enum, ", "), v)
	case kList, kTextList:
		if s, ok := v.(string); ok {
			if spec.kind == kTextList {
				return s, checkText("value", s)
			}
			return []string{s}, checkText("value", s)
		}
		items, ok := v.([]any)
		if !ok {
			if ss, ok := v.([]string); ok {
				for _, s := range ss {
					items = append(items, s)
				}
			} else {
				return nil, fmt.Errorf("want a list of text, got %v", v)
			}
		}
		out := make([]string, 0, len(items))
		for _, it := range items {
			s, ok := it.(string)
			if !ok {
				return nil, fmt.Errorf("want a list of text, got item %v", it)
			}
			if err := checkText("value", s); err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	case kTypeMap:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("want a map of column to type, got %v", v)
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		out := make([][2]string, 0, len(m))
		for _, k := range keys {
			t, ok := m[k].(string)
			if !ok || !typeName.MatchString(t) {
				return nil, fmt.Errorf("column %s: %v is not a type name", k, m[k])
			}
			if err := checkText("column name", k); err != nil {
				return nil, err
			}
			out = append(out, [2]string{k, t})
		}
		return out, nil
	}
	return nil, fmt.Errorf("unknown option kind")
}

func toInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int64:
		return x, true
	case int32:
		return int64(x), true
	case uint64:
		if x <= math.MaxInt64 {
			return int64(x), true
		}
	case uint32:
		return int64(x), true
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x), true
		}
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		return n, err == nil
	}
	return 0, false
}

// sqlValue renders a validated value as a SQL constant.
func sqlValue(v any) string {
	switch x := v.(type) {
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case string:
		return literal(x)
	case []string:
		parts := make([]string, len(x))
		for i, s := range x {
			parts[i] = literal(s)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case [][2]string:
		parts := make([]string, len(x))
		for i, kv := range x {
			parts[i] = literal(kv[0]) + ": " + literal(kv[1])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	panic(fmt.Sprintf("sqlValue: unexpected %T", v))
}

// namedArgs renders options as table-function arguments: ", name=value".
func namedArgs(o options, skip func(option) bool) string {
	var b strings.Builder
	for _, n := range o.sortedNames() {
		opt := o[n]
		if skip != nil && skip(opt) {
			continue
		}
		fmt.Fprintf(&b, ", %s=%s", n, sqlValue(opt.value))
	}
	return b.String()
}

package job

import "strings"

// Format is a file format's name as the engines know it: the name in
// lower case, with JSON Lines' other names (jsonl, ndjson) as json. A
// file source's or sink's ApplyDefaults calls it, so that what a run
// records and compares is the one name.
func Format(name string) string {
	f := strings.ToLower(strings.TrimSpace(name))
	switch f {
	case "jsonl", "ndjson", "jsonlines":
		return "json"
	}
	if f != name && f != "csv" && f != "json" && f != "parquet" {
		return name // not a format: Validate names it as written
	}
	return f
}

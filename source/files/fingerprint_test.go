package files

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/tidemark-etl/tidemark/bookmark"
)

// TestTuningOptionsAreNotASourceChange: max_line_size and the other tuning
// options are left out of a source's fingerprint, and a bookmark written
// while they were in it (before this rule) still matches, whatever their
// value now; any other option is still a change.
func TestTuningOptionsAreNotASourceChange(t *testing.T) {
	hive := true
	src := func(opts map[string]any) *Source {
		return &Source{location: "/data/in", cfg: &Config{Format: "csv", Tracking: "exact", HivePartitioning: &hive, Options: opts}}
	}
	fp, _ := src(map[string]any{"header": true, "max_line_size": 8 << 20}).fingerprint()
	same, _ := src(map[string]any{"header": true}).fingerprint()
	if fp != same {
		t.Errorf("max_line_size changes the fingerprint")
	}
	// What earlier versions stored for max_line_size 2MiB.
	old := `{"exclude":null,"format":"csv","hive":true,"include":null,"options":["header=true","max_line_size=2097152"],"path":"/data/in","tracking":"exact"}`
	h := sha256.Sum256([]byte(old))
	prev := bookmark.SourceState{Fingerprint: hex.EncodeToString(h[:12]), Describe: old}
	if !sameSource(prev, fp) {
		t.Errorf("a bookmark written with max_line_size in its fingerprint is reported as a changed source")
	}
	other, _ := src(map[string]any{"header": true, "max_line_size": 8 << 20, "delim": ";"}).fingerprint()
	if sameSource(prev, other) {
		t.Errorf("a new delim is not reported as a changed source")
	}
	changed := bookmark.SourceState{Fingerprint: "0123", Describe: `{"exclude":null,"format":"csv","hive":true,"include":null,"options":["header=false","max_line_size=2097152"],"path":"/data/in","tracking":"exact"}`}
	if sameSource(changed, fp) {
		t.Errorf("header: false -> true is not reported as a changed source")
	}
}

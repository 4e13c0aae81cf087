package main

import (
	"bytes"
	"encoding/json"
	"runtime/debug"
	"strings"
	"testing"
)

// TestVersionInfo: where the version and the commit come from, in order:
// -ldflags (a release build), the module version (go install ...@v1.2.3,
// whose pseudo-version names the commit), the VCS stamp of a build in a
// checkout.
func TestVersionInfo(t *testing.T) {
	vcs := func(rev string, modified bool) []debug.BuildSetting {
		m := "false"
		if modified {
			m = "true"
		}
		return []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.time", Value: "2026-12-04T13:00:00Z"},
			{Key: "vcs.modified", Value: m}}
	}
	for _, tc := range []struct {
		name             string
		ldVersion, ldRev string
		info             *debug.BuildInfo
		version, commit  string
	}{
		{"release build", "v1.2.3", "0123456789abcdef0123456789abcdef01234567",
			&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("ffff", true)},
			"v1.2.3", "0123456789abcdef0123456789abcdef01234567"},
		{"go install @version", "dev", "", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "v1.2.3", ""},
		{"go install @commit", "dev", "",
			&debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261204130000-0123456789ab"}},
			"v0.0.0-20261204130000-0123456789ab", "0123456789ab"},
		{"go install @branch after a tag", "dev", "",
			&debug.BuildInfo{Main: debug.Module{Version: "v1.2.4-0.20261204130000-abcdefabcdef+incompatible"}},
			"v1.2.4-0.20261204130000-abcdefabcdef+incompatible", "abcdefabcdef"},
		{"go build in a checkout", "dev", "",
			&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("0123456789abcdef0123456789abcdef01234567", false)},
			"dev", "0123456789abcdef0123456789abcdef01234567"},
		{"go build with changes", "dev", "",
			&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("0123456789abcdef0123456789abcdef01234567", true)},
			"dev", "0123456789abcdef0123456789abcdef01234567-dirty"},
		{"go build in a clean checkout (Go stamps a pseudo-version)", "dev", "",
			&debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261204130000-0123456789ab"}, Settings: vcs("0123456789abcdef0123456789abcdef01234567", false)},
			"v0.0.0-20261204130000-0123456789ab", "0123456789abcdef0123456789abcdef01234567"},
		{"no build info", "dev", "", nil, "dev", ""},
	} {
		got := versionOf(tc.info, tc.ldVersion, tc.ldRev)
		if got.Version != tc.version || got.Commit != tc.commit {
			t.Errorf("%s: version %q, commit %q; want %q, %q", tc.name, got.Version, got.Commit, tc.version, tc.commit)
		}
	}
}

// TestVersionOutput: the linked DuckDB's version is asked, and --json
// prints the same fields.
func TestVersionOutput(t *testing.T) {
	var out bytes.Buffer
	if err := printVersion(&out, false); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	if !strings.HasPrefix(text, "tidemark ") {
		t.Errorf("first line %q, want tidemark VERSION", text)
	}
	for _, want := range []string{"\ncommit ", "\nduckdb v1.", "\ngo go1."} {
		if !strings.Contains(text, want) {
			t.Errorf("version output lacks %q:\n%s", want, text)
		}
	}
	out.Reset()
	if err := printVersion(&out, true); err != nil {
		t.Fatal(err)
	}
	var v versionOutput
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatalf("version --json: %v\n%s", err, out.String())
	}
	if v.Version == "" || !strings.HasPrefix(v.DuckDB, "v1.") || !strings.HasPrefix(v.Go, "go1.") || !strings.Contains(v.Platform, "/") {
		t.Errorf("version --json: %+v", v)
	}
}

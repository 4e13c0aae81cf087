package main

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"runtime/debug"

	bindings "github.com/duckdb/duckdb-go-bindings"
	"github.com/spf13/cobra"
)

// version and commit are set by a release build (scripts/release.sh):
//
//	-ldflags "-X main.version=v1.2.3 -X main.commit=$(git rev-parse HEAD)"
//
// Without them, versionOf takes them from the build info.
var (
	version = "dev"
	commit  = ""
)

// versionOutput is what `tidemark version` prints (--json: this object).
type versionOutput struct {
	Version string `json:"version"`
	// Commit is the source revision; "-dirty" when built from a checkout
	// with changes; "" when unknown (go install of a tagged version).
	Commit   string `json:"commit"`
	DuckDB   string `json:"duckdb"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

func newVersionCmd() *cobra.Command {
	asJSON := false
	c := &cobra.Command{
		Use:   "version",
		Short: "Print tidemark's version, the commit it was built from and the linked DuckDB's version",
		Args:  exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return printVersion(cmd.OutOrStdout(), asJSON)
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print JSON on stdout")
	return c
}

// printVersion writes the version lines, or their JSON object.
func printVersion(w io.Writer, asJSON bool) error {
	info, _ := debug.ReadBuildInfo()
	v := versionOf(info, version, commit)
	if asJSON {
		return json.NewEncoder(w).Encode(v)
	}
	c := v.Commit
	if c == "" {
		c = "unknown"
	}
	_, err := fmt.Fprintf(w, "tidemark %s\ncommit %s\nduckdb %s\ngo %s %s\n", v.Version, c, v.DuckDB, v.Go, v.Platform)
	return err
}

// pseudoRev is the commit at the end of a Go pseudo-version
// (v0.0.0-20261204130000-0123456789ab, v1.2.4-0.20261204130000-0123456789ab).
var pseudoRev = regexp.MustCompile(`[-.]\d{14}-([0-9a-f]{12})(\+incompatible)?$`)

// versionOf says which tidemark this is. The version is, in order, the
// one a release build set, the module's (go install ...@VERSION), else
// ldVersion ("dev"); the commit the one a release build set, the VCS
// revision go build stamped in a checkout, else the one a pseudo-version
// names (go install ...@COMMIT, which has no VCS stamp).
func versionOf(info *debug.BuildInfo, ldVersion, ldCommit string) versionOutput {
	v := versionOutput{Version: ldVersion, Commit: ldCommit, DuckDB: bindings.LibraryVersion(),
		Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if info == nil {
		return v
	}
	mod := info.Main.Version
	if v.Version == "dev" && mod != "" && mod != "(devel)" {
		v.Version = mod
	}
	if v.Commit != "" {
		return v
	}
	var rev string
	modified := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev != "" && modified {
		rev += "-dirty"
	}
	if m := pseudoRev.FindStringSubmatch(mod); rev == "" && m != nil {
		rev = m[1]
	}
	v.Commit = rev
	return v
}

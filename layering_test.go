package tidemark_test

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path"
	"slices"
	"strings"
	"testing"
)

// The architecture map, as the imports enforce it: each package (or a
// folder of packages, "x/...") and the packages of this module it may
// import. Read from the bottom up: the core imports nothing of tidemark,
// the contracts import the core, the kinds and backends import the
// contracts (never each other), and only the top (the root package, the
// CLI, glue, serve, benchmarks, examples, e2e) links implementations.
// The most specific line for a package applies; a package with none fails.
var layers = []struct {
	pkg string
	may []string
}{
	// The core: pure rules, typed records, helpers.
	{"bookmark", nil},
	{"manifest", []string{"bookmark"}},
	{"catalog", []string{"bookmark"}},
	{"objstore", nil},
	{"internal/...", []string{"bookmark", "internal/..."}},
	// The job file: the envelope and the registry of kinds' blocks; it
	// knows no kind, no engine.
	{"job", []string{"bookmark", "objstore", "internal/..."}},

	// The contracts.
	{"store", []string{"bookmark", "catalog", "manifest", "internal/..."}},
	{"engine", []string{"bookmark", "job", "internal/..."}},
	{"source", []string{"bookmark", "catalog", "engine", "job", "manifest", "objstore", "store", "internal/..."}},
	{"sink", []string{"bookmark", "catalog", "engine", "job", "manifest", "objstore", "store", "internal/..."}},

	// Backends and kinds: each on the contracts, none on another.
	{"objstore/...", []string{"objstore", "internal/..."}},
	// store/s3 keeps its state in the S3 object store's client; s3 and
	// memory are backends of the one object-state core, store/objcore.
	{"store/...", []string{"bookmark", "catalog", "manifest", "objstore", "objstore/s3", "store", "store/objcore", "internal/..."}},
	{"store/objcore", []string{"bookmark", "catalog", "manifest", "store", "internal/..."}},
	// The objcore backend in one SQL table, for sqlite and postgres, and
	// the move of a relational state into it by a state copy.
	{"store/sqlobj", []string{"bookmark", "catalog", "manifest", "statecopy", "store", "store/objcore", "internal/..."}},
	// sqlite and postgres are dialects of the one SQL store.
	{"store/sqlstore", []string{"bookmark", "catalog", "manifest", "store", "internal/..."}},
	// They keep their state as objcore objects in one table (store/sqlobj)
	// and read an old relational state (store/sqlstore) only to move it
	// over, once (sqlobj.CopyState).
	{"store/sqlite", []string{"bookmark", "catalog", "manifest", "store", "store/objcore", "store/sqlobj", "store/sqlstore", "internal/..."}},
	{"store/postgres", []string{"bookmark", "catalog", "manifest", "store", "store/objcore", "store/sqlobj", "store/sqlstore", "internal/..."}},
	// The store suite checks an Importer by a state copy (TODO: a
	// statecopy suite of its own, once the store core settles).
	{"store/storetest", []string{"bookmark", "catalog", "manifest", "store", "statecopy", "internal/..."}},
	{"engine/...", []string{"bookmark", "engine", "job", "internal/..."}},
	{"source/...", []string{"bookmark", "catalog", "engine", "job", "manifest", "objstore", "source", "store", "internal/..."}},
	{"source/sqltable/sqlbench", []string{"source/sqltable", "internal/..."}},
	{"sink/...", []string{"bookmark", "catalog", "engine", "job", "manifest", "objstore", "sink", "store", "internal/..."}},
	// Iceberg tables (apache/iceberg-go), in the state store's own SQL catalog.
	{"sink/iceberg", []string{"bookmark", "catalog", "engine", "job", "manifest", "objstore", "sink", "store", "internal/..."}},
	{"source/iceberg", []string{"bookmark", "catalog", "engine", "job", "manifest", "objstore", "source", "store", "internal/..."}},
	// The test-only kinds, the template of a new kind: a kind's layer.
	{"internal/kindtest/...", []string{"bookmark", "catalog", "engine", "job", "manifest", "objstore", "sink", "source", "store", "internal/..."}},

	// What works over the contracts.
	{"catalog/ddl", []string{"bookmark", "catalog", "internal/..."}},
	{"statecopy", []string{"bookmark", "catalog", "manifest", "store", "internal/..."}},
	{"crawler", []string{"bookmark", "catalog", "job", "objstore", "store", "internal/..."}},
	{"lineage", []string{"bookmark", "job", "manifest", "store", "internal/..."}},
	{"metrics", []string{"bookmark", "store", "internal/..."}},

	// The top: what links implementations. The root package is the domain
	// API: Run, Plan, Reset, a Session, Bookmarks, through the contracts
	// (the Bookmarks API is about files by definition: source/files).
	{"", []string{"..."}},
	// all links the shipped kinds, for the top's side effects.
	{"all", []string{"..."}},
	{"cmd/...", []string{"..."}},
	{"glue", []string{"..."}},
	{"serve", []string{"", "bookmark", "catalog", "job", "metrics", "serve/...", "store", "internal/..."}},
	{"serve/...", []string{"", "bookmark", "catalog", "job", "store", "internal/..."}},
	{"bench/...", []string{"..."}},
	{"bench", []string{"..."}},
	{"examples/...", []string{"..."}},
	{"e2e", []string{"..."}},
	// The sink and source suites drive a kind as the runner does, on every
	// shipped state store, with a file sink or source as its counterpart:
	// test harnesses, at the top with the tests that run them.
	{"sink/sinktest", []string{"..."}},
	{"source/sourcetest", []string{"..."}},
}

// cgoFree are packages that must not link the cgo DuckDB build: a
// program that uses them runs where DuckDB is not built (the catalog's
// DDL quotes names, it does not run DuckDB).
var cgoFree = []string{"bookmark", "job", "catalog", "catalog/ddl", "store", "lineage", "crawler", "source", "sink"}

const module = "github.com/tidemark-etl/tidemark"

// matches reports whether package p (relative to the module) is pattern
// pat: the package itself, or "x/..." for the packages below x, or "..."
// for every package.
func matches(pat, p string) bool {
	switch {
	case pat == "...":
		return true
	case strings.HasSuffix(pat, "/..."):
		return strings.HasPrefix(p, strings.TrimSuffix(pat, "...")) && p != strings.TrimSuffix(pat, "/...")
	}
	return pat == p
}

// ruleFor is the most specific line of layers for p.
func ruleFor(p string) (may []string, ok bool) {
	best := -1
	for _, l := range layers {
		if !matches(l.pkg, p) && l.pkg != p {
			continue
		}
		n := len(l.pkg)
		if !strings.HasSuffix(l.pkg, "...") {
			n += 1000 // an exact line beats any folder
		}
		if n > best {
			best, may, ok = n, l.may, true
		}
	}
	return may, ok
}

type listed struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// listPackages is `go list -deps`'s view of every package of the module.
func listPackages(t *testing.T) []listed {
	t.Helper()
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports,Deps", "./...").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	var pkgs []listed
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("reading go list: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages, want the module's", len(pkgs))
	}
	return pkgs
}

func rel(importPath string) (string, bool) {
	if importPath == module {
		return "", true
	}
	return strings.CutPrefix(importPath, module+"/")
}

// TestLayering checks every import between the module's packages against
// the architecture map above.
func TestLayering(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list over the module")
	}
	pkgs := listPackages(t)
	for _, l := range layers {
		if !slices.ContainsFunc(pkgs, func(p listed) bool { r, _ := rel(p.ImportPath); return r == l.pkg || matches(l.pkg, r) }) {
			t.Errorf("the layering table's line %q matches no package: remove it or fix it", l.pkg)
		}
	}
	for _, p := range pkgs {
		from, _ := rel(p.ImportPath)
		may, ok := ruleFor(from)
		if !ok {
			t.Errorf("package %q has no line in the layering table: add one", from)
			continue
		}
		for _, imp := range p.Imports {
			to, inModule := rel(imp)
			if !inModule {
				continue
			}
			if !slices.ContainsFunc(may, func(pat string) bool { return matches(pat, to) }) {
				t.Errorf("%s imports %s, which its layer may not (it may import: %s)", show(from), show(to), strings.Join(may, ", "))
			}
		}
	}
}

// TestCgoFree checks that the packages in cgoFree link no DuckDB.
func TestCgoFree(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list over the module")
	}
	for _, p := range listPackages(t) {
		from, _ := rel(p.ImportPath)
		if !slices.Contains(cgoFree, from) {
			continue
		}
		for _, d := range p.Deps {
			if strings.HasPrefix(d, "github.com/duckdb/") {
				t.Errorf("%s links %s (through its imports): it must stay cgo-free", show(from), d)
			}
		}
	}
}

func show(p string) string {
	if p == "" {
		return "the root package"
	}
	return path.Clean(p)
}

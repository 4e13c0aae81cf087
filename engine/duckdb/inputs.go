package duckdb

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/tidemark-etl/tidemark/engine"
)

// chunkFiles is the most files one DuckDB read call gets; a source with
// more files becomes a UNION ALL of reads over chunks.
//
// Measured on a 2-core machine (TestBenchChunkSize, 10-row files): what
// makes many-file reads slow is per-file sniffing, ~0.6 ms a file (500
// files 0.55 s, 16,000 files 9.3 s), which explicit schemas remove (500
// files 18 ms, 16,000 files 0.7-1.3 s). With explicit schemas one list still
// grows faster than linearly at scale: 64,000 files took 3.9 s as one list
// and 2.6-2.9 s in chunks of 500, 1,000 or 2,000 (medians of 5; chunk sizes
// within noise of each other).
const chunkFiles = 500

// inputs is a source's readable files: zero-byte files dropped, each file
// under the path DuckDB is given, and the way back from that path to the key
// for messages.
type inputs struct {
	paths []string          // what DuckDB reads, in plan order
	keys  []string          // Input.Key for each path
	byKey map[string]string // read path -> key
	// hiveKeys are the key=value folder names of the source's files, in
	// folder order; empty unless Source.Hive.
	hiveKeys []string
	// quoted maps the read path of a copy with JSON numbers quoted
	// (jsonnum.go) to the file it was copied from.
	quoted map[string]string
}

// keyOf maps a path that DuckDB reported back to the input key.
func (in *inputs) keyOf(p string) string {
	if k, ok := in.byKey[p]; ok {
		return k
	}
	return p
}

// chunks splits the read paths into groups of at most chunkFiles.
func (in *inputs) chunks() [][]string {
	var out [][]string
	for i := 0; i < len(in.paths); i += chunkFiles {
		out = append(out, in.paths[i:min(i+chunkFiles, len(in.paths))])
	}
	return out
}

// linker creates the link tree: symbolic links under one temporary folder
// whose names DuckDB can read safely.
type linker struct {
	base string          // where to create the tree ("" = os.TempDir)
	dir  string          // created on first use
	made map[string]bool // folders created so far
}

func (l *linker) root() (string, error) {
	if l.dir != "" {
		return l.dir, nil
	}
	dir, err := os.MkdirTemp(l.base, "tidemark-inputs-")
	if err != nil {
		return "", fmt.Errorf("creating link folder: %w", err)
	}
	// DuckDB's hive parser would read key=value folders above our tree, and
	// glob characters would turn every path into a pattern.
	for _, seg := range strings.Split(filepath.ToSlash(dir), "/") {
		if strings.Contains(seg, "=") || hasGlob(seg) {
			_ = os.RemoveAll(dir)
			return "", fmt.Errorf("link folder %s: segment %q has '=' or a glob character; set the engine's spill dir elsewhere", dir, seg)
		}
	}
	l.dir, l.made = dir, map[string]bool{}
	return dir, nil
}

// emptyFile returns the path of an empty file inside the tree.
func (l *linker) emptyFile() (string, error) {
	root, err := l.root()
	if err != nil {
		return "", err
	}
	p := filepath.Join(root, "empty.csv")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		return "", fmt.Errorf("creating empty file: %w", err)
	}
	return p, nil
}

func (l *linker) cleanup() {
	if l.dir != "" {
		_ = os.RemoveAll(l.dir)
		l.dir = ""
	}
}

// prepareInputs drops zero-byte files and decides each file's read path.
// A file is read in place unless DuckDB would misread its path: glob
// characters ('a[1].csv' silently reads 'a1.csv'), a compression suffix
// that differs from the key's (cached downloads), or a hive source, whose
// columns must come from the key only and never from folders above the
// source root. Such files are read through a symbolic link named
// <tree>/<n>/<k=v>/.../<i>_<base>.
func prepareInputs(src *engine.Source, n int, l *linker) (*inputs, error) {
	in := &inputs{byKey: map[string]string{}}
	for i, f := range src.Files {
		if f.Size == 0 && !src.Stream {
			// Zero may mean "unknown" to a caller; ask the disk.
			st, err := os.Stat(f.Location)
			if err != nil {
				return nil, &engine.InputError{Source: src.Ctx, File: f.Key, Msg: err.Error()}
			}
			if st.Size() == 0 {
				continue
			}
		}
		if err := checkText("path", f.Location); err != nil {
			return nil, &engine.InputError{Source: src.Ctx, File: f.Key, Msg: err.Error()}
		}
		var hive []string
		if src.Hive {
			if ie := engine.PartitionFolders(src.Ctx, f.Key); ie != nil {
				return nil, ie
			}
			var err error
			hive, err = hiveDirs(f.Key)
			if err != nil {
				return nil, &engine.InputError{Source: src.Ctx, File: f.Key, Msg: err.Error()}
			}
			names := hiveNames(hive)
			if len(in.keys) == 0 {
				in.hiveKeys = names
			} else if !equalStrings(names, in.hiveKeys) {
				return nil, &engine.InputError{Source: src.Ctx, File: f.Key,
					Msg: fmt.Sprintf("partition folders %v differ from %v in %s", names, in.hiveKeys, in.keys[0])}
			}
		}
		p := f.Location
		if (src.Hive && hiveAbove(f.Location, hive)) || hasGlob(f.Location) || compressionSuffix(f.Location) != compressionSuffix(f.Key) {
			root, err := l.root()
			if err != nil {
				return nil, err
			}
			base := sanitize(path.Base(f.Key))
			p = filepath.Join(append(append([]string{root, fmt.Sprint(n)}, hive...), fmt.Sprintf("%d_%s", i, base))...)
			if dir := filepath.Dir(p); !l.made[dir] {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					return nil, fmt.Errorf("source %s: creating link folder: %w", src.Ctx, err)
				}
				l.made[dir] = true
			}
			abs := f.Location
			if !filepath.IsAbs(abs) {
				if abs, err = filepath.Abs(abs); err != nil {
					return nil, fmt.Errorf("source %s: %w", src.Ctx, err)
				}
			}
			if err := os.Symlink(abs, p); err != nil {
				if err2 := os.Link(abs, p); err2 != nil {
					return nil, fmt.Errorf("source %s: linking %s: %w", src.Ctx, f.Key, err)
				}
			}
		}
		in.paths = append(in.paths, p)
		in.keys = append(in.keys, f.Key)
		in.byKey[p] = f.Key
	}
	return in, nil
}

// hiveAbove reports whether a hive source's file must be read through a
// link: its key has key=value folders (whose columns come from the key
// alone), or a folder on its path does (which DuckDB would read as
// columns). A file with neither is read in place: a link per file costs a
// syscall or two each, which a first run over a large backlog pays per
// file.
func hiveAbove(location string, hive []string) bool {
	return len(hive) > 0 || strings.Contains(filepath.Dir(location), "=")
}

// hiveDirs returns the key=value folder segments of key, in order.
func hiveDirs(key string) ([]string, error) {
	dir := path.Dir(strings.TrimPrefix(key, "/"))
	if dir == "." {
		return nil, nil
	}
	var out []string
	for _, seg := range strings.Split(dir, "/") {
		k, _, ok := strings.Cut(seg, "=")
		if !ok || k == "" {
			continue
		}
		if hasGlob(seg) || strings.ContainsAny(seg, "'\\") {
			return nil, fmt.Errorf("partition folder %q has a character DuckDB cannot take in a path", seg)
		}
		out = append(out, seg)
	}
	return out, nil
}

func hiveNames(dirs []string) []string {
	out := make([]string, len(dirs))
	for i, d := range dirs {
		out[i], _, _ = strings.Cut(d, "=")
	}
	return out
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !strings.EqualFold(a[i], b[i]) {
			return false
		}
	}
	return true
}

// hasGlob reports whether DuckDB would treat p as a glob pattern.
func hasGlob(p string) bool { return strings.ContainsAny(p, "*?[]{}") }

// compressionSuffix is the suffix DuckDB uses to pick a decompressor.
func compressionSuffix(p string) string {
	lower := strings.ToLower(p)
	for _, s := range []string{".gz", ".gzip", ".zst", ".zstd"} {
		if strings.HasSuffix(lower, s) {
			return s
		}
	}
	return ""
}

// sanitize replaces characters that are unsafe in a link's base name.
func sanitize(base string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || strings.ContainsRune("*?[]{}'\\=", r) {
			return '_'
		}
		return r
	}, base)
}

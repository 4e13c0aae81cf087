package spark

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/zstd"

	"github.com/tidemark-etl/tidemark/engine"
)

// unpacked holds the local copies of inputs Spark cannot read where they
// lie: zstd files (Hadoop's zstd codec needs a native library that the
// pip package and many clusters lack). They are decompressed next to each
// other under a folder of the run, keys kept (so hive folders stay);
// a hive source with one such file has its other files linked there too,
// so that one base path covers all of them.
type unpacked struct {
	root string // "" until the first file
	base string // the engine's temporary folder
}

// localInputs returns the locations Spark reads for src's inputs, in order.
func (u *unpacked) localInputs(src *engine.Source, n int) ([]string, error) {
	locs := make([]string, len(src.Files))
	anyZst := false
	for i, in := range src.Files {
		locs[i] = in.Location
		if isZst(in.Key) && engine.Scheme(in.Location) == "file" {
			anyZst = true
		}
	}
	if !anyZst {
		return locs, nil
	}
	if u.root == "" {
		dir, err := os.MkdirTemp(u.base, "tidemark-spark-")
		if err != nil {
			return nil, fmt.Errorf("creating a folder for decompressed inputs: %w", err)
		}
		u.root = dir
	}
	srcRoot := filepath.Join(u.root, fmt.Sprint(n))
	for i, in := range src.Files {
		zst := isZst(in.Key) && engine.Scheme(in.Location) == "file"
		if !zst && !src.Hive {
			continue
		}
		from, err := engine.LocalPath(in.Location)
		if err != nil {
			return nil, err
		}
		to := filepath.Join(srcRoot, filepath.FromSlash(strings.TrimSuffix(in.Key, ".zst")))
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return nil, err
		}
		if zst {
			err = decompress(from, to)
		} else {
			var abs string
			if abs, err = filepath.Abs(from); err == nil {
				err = os.Symlink(abs, to)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("source %s: %s: %w", src.Ctx, in.Key, err)
		}
		locs[i] = to
	}
	return locs, nil
}

func isZst(key string) bool {
	k := strings.ToLower(key)
	return strings.HasSuffix(k, ".zst") || strings.HasSuffix(k, ".zstd")
}

func decompress(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	d, err := zstd.NewReader(in)
	if err != nil {
		return err
	}
	defer d.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, d); err != nil {
		out.Close()
		return fmt.Errorf("decompressing: %w", err)
	}
	return out.Close()
}

// cleanup removes the decompressed copies.
func (u *unpacked) cleanup() {
	if u.root != "" {
		_ = os.RemoveAll(u.root)
		u.root = ""
	}
}

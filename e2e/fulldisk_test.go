package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFullDisk: a sink on a file system that fills up fails the run with a
// message naming the file and the cause, exit 1, no bookmark advanced and
// nothing published; once there is room, the next run delivers everything
// exactly once. The small file system is a tmpfs (the test needs root, as
// CI has; elsewhere it reports a skip, never a pass).
func TestFullDisk(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	if err := os.MkdirAll(small, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", small).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs here (%v: %s)", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", small).Run() })
	filler := filepath.Join(small, "filler")
	if err := os.WriteFile(filler, make([]byte, 250<<10), 0o644); err != nil && !strings.Contains(err.Error(), "no space") {
		t.Fatal(err)
	}

	in := filepath.Join(dir, "in")
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	var want int
	for i := range 5 {
		var b strings.Builder
		b.WriteString("order_id,amount\n")
		for j := range 200 {
			fmt.Fprintf(&b, "%d,%d\n", i*1000+j, j)
			want++
		}
		if err := os.WriteFile(filepath.Join(in, fmt.Sprintf("f%d.csv", i)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	job := filepath.Join(dir, "job.yaml")
	if err := os.WriteFile(job, []byte(fmt.Sprintf(`job: full
sources:
  - ctx: orders
    path: in/
    format: csv
    options: {header: true}
sinks:
  - ctx: out
    path: %s/out/
    format: csv
`, small)), 0o644); err != nil {
		t.Fatal(err)
	}

	r := tidemark(t, dir, nil, "run", job, "--json")
	if r.code != 1 {
		t.Fatalf("run onto a full disk: got exit %d, want 1\n%v", r.code, r)
	}
	if !strings.Contains(r.stderr, "No space left on device") || !strings.Contains(r.stderr, "sink out") {
		t.Errorf("run onto a full disk: stderr does not name the sink and the cause:\n%s", r.stderr)
	}
	var bm struct{ Version int64 }
	show := tidemark(t, dir, nil, "bookmark", "show", job, "--json")
	if err := json.Unmarshal([]byte(show.stdout), &bm); err != nil || bm.Version != 0 {
		t.Errorf("bookmark after the failed run: version %d (%v), want 0\n%s", bm.Version, err, show.stdout)
	}
	if got := publishedRows(t, filepath.Join(small, "out")); got != 0 {
		t.Errorf("after the failed run: %d rows published, want 0", got)
	}

	// Room again: the next run delivers every record once.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if r := tidemark(t, dir, nil, "run", job, "--json"); r.code != 0 {
		t.Fatalf("run with room: got exit %d\n%v", r.code, r)
	}
	if got := publishedRows(t, filepath.Join(small, "out")); got != want {
		t.Errorf("after the run with room: %d rows published, want %d", got, want)
	}
}

// publishedRows counts the data lines of the published CSV files under dir
// (skipping _-prefixed folders), header lines excluded.
func publishedRows(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), "_") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".csv") {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			n += len(lines) - 1
		}
		return nil
	})
	return n
}

package serve_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
)

func TestJobNewestFiles(t *testing.T) {
	w := newWorld(t)
	for _, batch := range [][]string{{"a", "b", "c", "d", "e", "f"}, {"g", "h", "i", "j", "k", "l"}} {
		for _, n := range batch {
			w.write(n+".csv", 1)
		}
		w.run()
	}
	w.serve(nil)
	var got struct {
		NewestFiles map[string][]struct {
			Path  string `json:"path"`
			Size  int64  `json:"size"`
			MTime int64  `json:"mtime"`
		} `json:"newest_files"`
	}
	w.getJSON(jobPath(""), &got)
	var paths []string
	for _, f := range got.NewestFiles["orders"] {
		paths = append(paths, filepath.Base(f.Path))
		if f.Size == 0 || f.MTime == 0 {
			t.Errorf("newest file %s: got size %d mtime %d, want both set", f.Path, f.Size, f.MTime)
		}
	}
	// The second run's six files first, then the first run's, each run's
	// newest mtime first (each file written after the one before), ten in all.
	want := []string{"l.csv", "k.csv", "j.csv", "i.csv", "h.csv", "g.csv", "f.csv", "e.csv", "d.csv", "c.csv"}
	if !slices.Equal(paths, want) {
		t.Errorf("newest files: got %v, want %v", paths, want)
	}
	if len(got.NewestFiles) != 1 {
		t.Errorf("newest files ctxs: got %v, want only orders", fmt.Sprint(got.NewestFiles))
	}
}

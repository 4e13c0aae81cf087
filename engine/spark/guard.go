package spark

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tidemark-etl/tidemark/engine"
)

// guard checks, before Spark writes anything, every location it will
// write: each sink's Location and, with quarantine, Rejects/<source>. Each
// must be a local folder that holds nothing (the staging folder the runner
// made for this run, still empty), below a folder (never / or a volume
// root), and no two may nest. Writes then use save mode ErrorIfExists, so
// Spark itself refuses a path that something appeared at since: whatever a
// plan says, Spark never overwrites or deletes a file tidemark did not
// just ask it to write.
func (x *execution) guard() error {
	var targets []string
	for _, s := range x.plan.Sinks {
		targets = append(targets, s.Location)
	}
	if x.plan.OnBadRecord == engine.BadQuarantine {
		for _, r := range x.readers {
			if r.rejects {
				targets = append(targets, joinLoc(x.plan.Rejects, r.src.Ctx))
			}
		}
	}
	var dirs []string
	for _, t := range targets {
		d, err := checkTarget(t)
		if err != nil {
			return err
		}
		for _, o := range dirs {
			if within(d, o) || within(o, d) {
				return fmt.Errorf("spark write guard: locations %s and %s nest; refusing to write either", o, d)
			}
		}
		for _, r := range x.readers {
			for _, in := range r.src.Files {
				if p, err := engine.LocalPath(in.Location); err == nil {
					if abs, err := filepath.Abs(p); err == nil && within(abs, d) {
						return fmt.Errorf("spark write guard: location %s holds input %s; refusing to write there", t, in.Key)
					}
				}
			}
		}
		dirs = append(dirs, d)
	}
	return nil
}

// checkTarget checks one write location and returns its absolute path. An
// empty folder is removed, for ErrorIfExists.
func checkTarget(loc string) (string, error) {
	p, err := engine.LocalPath(loc)
	if err != nil {
		return "", fmt.Errorf("spark write guard: %w", err)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("spark write guard: %s: %w", loc, err)
	}
	if abs == filepath.Dir(abs) || filepath.Dir(abs) == filepath.Dir(filepath.Dir(abs)) {
		return "", fmt.Errorf("spark write guard: %s is a root or just below one; refusing to write there", loc)
	}
	entries, err := os.ReadDir(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return abs, nil
	case err != nil:
		return "", fmt.Errorf("spark write guard: %s: %w", loc, err)
	case len(entries) > 0:
		return "", fmt.Errorf("spark write guard: %s is not empty (%s, ...); only a fresh staging location may be written", loc, entries[0].Name())
	}
	if err := os.Remove(abs); err != nil {
		return "", fmt.Errorf("spark write guard: %s: %w", loc, err)
	}
	return abs, nil
}

// within reports whether p is dir or lies below it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// joinLoc appends a name to a location (a path or a URL).
func joinLoc(loc, name string) string {
	if engine.Scheme(loc) == "file" && !strings.HasPrefix(strings.ToLower(loc), "file://") {
		return filepath.Join(loc, name)
	}
	return strings.TrimRight(loc, "/") + "/" + name
}

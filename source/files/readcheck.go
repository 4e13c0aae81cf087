package files

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"
	"time"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/source"
)

// A local input is read by the engine in place, from its path, while other
// programs may still write it. The run records what it read: each file is
// stamped (size, mtime, ctime, inode) just before the engine starts and
// again after it returned. A file that changed before the engine started is
// recorded as it was then; one that changed while the engine read it is
// dropped from the run (the engine runs again without it) and left for the
// next run, so it is never recorded with bytes of two versions, and its
// rows are not in the output. Remote inputs need none of this: the run
// reads a downloaded copy, pinned to one object version (see download).

// stamp is what the disk says of a file, enough to tell that its bytes may
// have changed between two looks.
type stamp struct {
	size, mtime, ctime int64 // mtime and ctime in ns; ctime 0 where unknown
	dev, ino           uint64
}

// Timestamp granularity. A disk with nanosecond timestamps still sets them
// from a clock that ticks every few milliseconds (the kernel's coarse
// clock); a timestamp with no fraction of a second comes from a disk that
// keeps whole seconds (two on FAT).
const (
	fineTick   = 20 * time.Millisecond
	coarseTick = 2 * time.Second
)

// settledAt is when a write to the file is sure to give it timestamps that
// differ from s: the end of the clock tick of its last change. Before that,
// a write of the same size in the same tick can leave size and timestamps
// as they are. The last change is the ctime where there is one (the kernel
// sets it from its clock on every write; an mtime may have been set to
// anything, a whole second by tar or rsync), else the mtime.
func (s stamp) settledAt() time.Time {
	last := s.ctime
	if last == 0 {
		last = s.mtime
	}
	tick := fineTick
	if last%int64(time.Second) == 0 {
		tick = coarseTick
	}
	return time.Unix(0, last).Add(tick)
}

// localInput is one planned file that the engine reads in place.
type localInput struct {
	path   string // the file's key in the source
	local  string
	before stamp
}

// stampInputs stats the plan's local inputs just before the engine runs. A
// file that changed since planning is recorded as it is now (it is what the
// engine reads); one that vanished is dropped and counted as missing. A
// file changed so recently that a write of the same size could still keep
// its timestamps is stamped again once its clock tick has passed, so that
// any later write shows.
func (p *Plan) stampInputs(log *slog.Logger) ([]localInput, error) {
	stamps := map[string]stamp{}
	paths := map[string]string{}
	for _, f := range p.Take {
		if lp, ok := p.src.objs.LocalPath(f.Path); ok {
			paths[f.Path] = lp
		}
	}
	gone := map[string]bool{}
	for round := 0; ; round++ {
		var wait time.Duration
		for k, lp := range paths {
			st, err := statStamp(lp)
			if errors.Is(err, fs.ErrNotExist) {
				gone[k] = true
				delete(paths, k)
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("source %s: %w", p.Ctx, err)
			}
			stamps[k] = st
			// A timestamp far ahead is a clock's fault, not a write in progress.
			if d := time.Until(st.settledAt()); d > 0 && d <= coarseTick {
				wait = max(wait, d)
			}
		}
		if wait == 0 || round == 2 {
			break
		}
		time.Sleep(wait)
	}
	for path := range gone {
		log.Warn("input file disappeared after planning; not recorded, will be read if it comes back", "source", p.Ctx, "file", path)
		p.missing = append(p.missing, path)
	}
	p.dropFiles(gone)
	var ins []localInput
	for j := range p.Take {
		f := &p.Take[j]
		st, ok := stamps[f.Path]
		if !ok || paths[f.Path] == "" {
			continue
		}
		if f.Size != st.size || f.MTime != st.mtime {
			log.Info("input file changed after planning; recording it as read", "source", p.Ctx, "file", f.Path,
				"planned_bytes", f.Size, "bytes", st.size)
			f.Size, f.MTime = st.size, st.mtime
		}
		ins = append(ins, localInput{path: f.Path, local: paths[f.Path], before: st})
	}
	return ins, nil
}

// changedInputs stats the local inputs again after the engine returned and
// returns the files whose stamp differs from before. A file that vanished
// is not one of them: after a successful read it was read whole, after a
// failed one dropMissing drops it.
func changedInputs(ins []localInput) map[string]bool {
	changed := map[string]bool{}
	for _, in := range ins {
		st, err := statStamp(in.local)
		if err != nil || st == in.before {
			continue
		}
		changed[in.path] = true
	}
	return changed
}

// dropChanged removes the files that changed while the engine read them
// from the plan, counts them and reports them.
func (p *Plan) dropChanged(paths map[string]bool, log *slog.Logger) {
	for path := range paths {
		log.Warn("input file changed while it was read; not recorded, its rows left out, the next run reads it",
			"source", p.Ctx, "file", path)
		p.changed++
	}
	p.dropFiles(paths)
}

// dropFiles removes paths from the plan. A modified file dropped keeps its
// old record.
func (p *Plan) dropFiles(paths map[string]bool) {
	p.Take = slices.DeleteFunc(p.Take, func(f bookmark.File) bool { return paths[f.Path] })
	p.Superseded = slices.DeleteFunc(p.Superseded, func(f bookmark.File) bool { return paths[f.Path] })
}

// changedError is a run whose inputs kept changing while they were read.
func changedError(ctxName string, changed map[string]bool) error {
	var names []string
	for path := range changed {
		names = append(names, ctxName+": "+path)
	}
	slices.Sort(names)
	return fmt.Errorf("input files kept changing while they were read (%d attempts): %v; run again once they are complete", source.MaxAttempts, names)
}

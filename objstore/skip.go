package objstore

import (
	"context"
	"iter"
	"strings"
)

// FolderSkipper is implemented by stores that can list their root while
// leaving out every folder below it that holds an entry with a given name
// (for tidemark: another job's sink, which keeps its _tidemark/ folder),
// without a second listing.
type FolderSkipper interface {
	// ListSkipping is List(ctx, "") without the objects of every folder
	// strictly below the root that holds an entry (a file or a folder,
	// hidden or not) named marker: each of those is passed to skipped, with
	// that folder (the one nearest the root when several are marked),
	// instead of being yielded. The root itself is never skipped.
	ListSkipping(ctx context.Context, marker string, skipped func(folder string, o Object)) iter.Seq2[Object, error]
}

// MarkedFolder returns the folder nearest the root of key that marked
// holds, if any.
func MarkedFolder(key string, marked map[string]bool) (string, bool) {
	if len(marked) == 0 {
		return "", false
	}
	for i := 0; i < len(key); i++ {
		if key[i] == '/' && marked[key[:i]] {
			return key[:i], true
		}
	}
	return "", false
}

// SkipMarked filters a complete list of objects (a store that has listed
// everything before it yields, as the local store does past a symlink):
// objects under a folder in marked go to skipped, the others to yield, in
// order. It returns false if yield did.
func SkipMarked(objs []Object, marked map[string]bool, skipped func(string, Object), yield func(Object, error) bool) bool {
	for _, o := range objs {
		if dir, ok := MarkedFolder(o.Key, marked); ok {
			if skipped != nil {
				skipped(dir, o)
			}
			continue
		}
		if !yield(o, nil) {
			return false
		}
	}
	return true
}

// MarkFilter does ListSkipping for a store that lists in key order as it
// goes (S3): a folder's marker entry shows up only at its place in that
// order ("x/2024/a.csv" sorts before "x/_tidemark/…", "x/a.csv" after it),
// so an object is held back until every folder above it is settled, that
// is until the listing has passed where that folder's marker would sort.
// It holds at most the objects of a folder that sort before its marker
// (folders named with digits or capitals), and nothing for folders named
// in lower case. Feed it every listed key in order with See, hidden ones
// included, and the visible objects with Add; Release yields what is
// settled and Flush the rest once the listing is complete.
//
// A store that can ask whether one folder holds the marker (Probe: one
// small listing) bounds what is held: past MaxHeld objects, the folders
// that hold the oldest one back are probed instead of waited for, so a
// year of date-named folders ("2026/01/…", all before "2026/_tidemark")
// costs a request or two, not a year of objects in memory.
type MarkFilter struct {
	Marker  string
	Skipped func(folder string, o Object)
	// Probe, if set, reports whether folder holds an entry named Marker.
	Probe   func(folder string) (bool, error)
	MaxHeld int

	marked map[string]bool
	probed map[string]bool // folders Probe settled
	held   []Object        // FIFO, from head
	head   int
	last   string // the last key seen: every later one sorts after it
}

// See records one listed key, in key order.
func (m *MarkFilter) See(key string) {
	m.last = key
	for i := strings.Index(key, "/"+m.Marker); i >= 0; {
		end := i + 1 + len(m.Marker)
		if end == len(key) || key[end] == '/' {
			if m.marked == nil {
				m.marked = map[string]bool{}
			}
			m.marked[key[:i]] = true
		}
		j := strings.Index(key[i+1:], "/"+m.Marker)
		if j < 0 {
			break
		}
		i += 1 + j
	}
}

// Add holds a visible object that was just seen.
func (m *MarkFilter) Add(o Object) { m.held = append(m.held, o) }

// settled reports whether every folder of key is known to hold the marker
// or not: the listing is past folder+"/"+marker+"0", after which no key of
// folder/marker[/…] can sort.
func (m *MarkFilter) settled(key string) bool {
	for i := 0; i < len(key); i++ {
		if key[i] != '/' {
			continue
		}
		// Compare m.last with key[:i] + "/" + Marker + "0" without building it.
		if !m.probed[key[:i]] && !atLeast(m.last, key[:i], "/", m.Marker, "0") {
			return false
		}
	}
	return true
}

// probe settles every folder of key with Probe.
func (m *MarkFilter) probe(key string) error {
	for i := 0; i < len(key); i++ {
		if key[i] != '/' || m.probed[key[:i]] || atLeast(m.last, key[:i], "/", m.Marker, "0") {
			continue
		}
		has, err := m.Probe(key[:i])
		if err != nil {
			return err
		}
		if m.probed == nil {
			m.probed = map[string]bool{}
		}
		m.probed[key[:i]] = true
		if has {
			if m.marked == nil {
				m.marked = map[string]bool{}
			}
			m.marked[key[:i]] = true
		}
	}
	return nil
}

// atLeast reports whether s >= the concatenation of parts (byte order).
func atLeast(s string, parts ...string) bool {
	for _, p := range parts {
		n := min(len(s), len(p))
		if c := strings.Compare(s[:n], p[:n]); c != 0 {
			return c > 0
		}
		if n < len(p) {
			return false // s is a proper prefix of the rest
		}
		s = s[n:]
	}
	return true
}

// Release yields the held objects whose folders are settled, in order; it
// returns false if yield did, or after yielding a Probe error.
func (m *MarkFilter) Release(yield func(Object, error) bool) bool {
	return m.release(false, yield)
}

// Flush yields every held object: the listing is complete, so every folder
// is settled.
func (m *MarkFilter) Flush(yield func(Object, error) bool) bool {
	return m.release(true, yield)
}

func (m *MarkFilter) release(all bool, yield func(Object, error) bool) bool {
	for m.head < len(m.held) {
		o := m.held[m.head]
		if !all && !m.settled(o.Key) {
			if m.Probe == nil || len(m.held)-m.head <= m.MaxHeld {
				break
			}
			if err := m.probe(o.Key); err != nil {
				yield(Object{}, err)
				return false
			}
		}
		m.held[m.head] = Object{}
		m.head++
		if dir, ok := MarkedFolder(o.Key, m.marked); ok {
			if m.Skipped != nil {
				m.Skipped(dir, o)
			}
			continue
		}
		if !yield(o, nil) {
			return false
		}
	}
	if m.head == len(m.held) {
		m.held, m.head = m.held[:0], 0
	} else if m.head > len(m.held)/2 {
		m.held, m.head = append(m.held[:0], m.held[m.head:]...), 0
	}
	return true
}

// Package crawler is tidemark's crawler: it lists folders (local or S3),
// classifies a sample of their files by content (Parquet footers, JSON
// Lines, CSV with delimiter and header detection, gzip and zstd looked
// inside), groups folders into tables and partitions by explicit rules,
// and registers them in the catalog under a schema change policy. Its own
// bookmark (the job crawler:NAME in the state store) makes later crawls
// open only new folders or new files.
package crawler

import (
	"context"
	"fmt"
	"log/slog"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/zeebo/xxh3"

	"github.com/tidemark-etl/tidemark/bookmark"
	"github.com/tidemark-etl/tidemark/catalog"
	"github.com/tidemark-etl/tidemark/objstore"
	"github.com/tidemark-etl/tidemark/store"
)

// Options tune one crawl.
type Options struct {
	// Logger receives warnings (nil: none).
	Logger *slog.Logger
	// Host is this host's identity in the lease and the run record ("":
	// hostname:pid).
	Host string
	// LeaseTTL is the lease's time to live (0: DefaultLeaseTTL).
	LeaseTTL time.Duration
}

// TooManyTablesError is a crawl that would have made more tables than
// max_tables: it registered nothing.
type TooManyTablesError struct {
	Tables []string // every table it would have had, by name
	Max    int
}

func (e *TooManyTablesError) Error() string {
	shown := e.Tables
	if len(shown) > 10 {
		shown = shown[:10]
	}
	more := ""
	if len(e.Tables) > len(shown) {
		more = fmt.Sprintf(", … %d more", len(e.Tables)-len(shown))
	}
	return fmt.Sprintf("the crawl would make %d tables, more than max_tables %d (%s%s): nothing was registered; "+
		"set table_level to the folder depth of one table, exclude what is not data, keep combine_compatible_schemas "+
		"true, or raise max_tables", len(e.Tables), e.Max, strings.Join(shown, ", "), more)
}

// crawl is one crawl's working state.
type crawl struct {
	cfg     *Config
	st      store.Store
	rep     *Report
	targets []*target
	byLoc   map[string]*catalog.Table
	skipped map[*file]bool
}

// Crawl runs the crawler once under its lease: it lists the targets,
// opens the files its recrawl mode calls for, maps folders to tables and
// partitions, and commits the catalog changes and its bookmark in one
// state-store transaction (store.Commit.Catalog), fenced by the lease's
// token. A crawl that fails has changed nothing; running it again is
// safe. A table changed meanwhile by someone else (a sink registering it)
// fails the commit with catalog.ErrConflict. The report is returned on
// failure too, with Status failed. A held lease is a
// *store.LeaseHeldError.
func Crawl(ctx context.Context, cfg *Config, st store.Store, o Options) (*Report, error) {
	start := time.Now()
	rep := &Report{Crawler: cfg.Name, Database: cfg.Database, Status: store.StatusFailed, Tables: map[string]*TableReport{},
		Recrawl: cfg.Recrawl, Skipped: []Skip{}}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ttl := o.LeaseTTL
	if ttl == 0 {
		ttl = DefaultLeaseTTL
	}
	job := cfg.Job()
	run := store.Run{Job: job, RunID: newRunID(start), Mode: bookmark.ModeEnable, Status: store.StatusRunning,
		StartedAt: start.UTC(), Sources: map[string]store.Count{}, Sinks: map[string]store.Count{}}
	h := holder(run.RunID, o.Host)
	run.Host = h.Host
	l, err := takeLease(ctx, st, job, h, ttl, log)
	if err != nil {
		return rep, fmt.Errorf("crawler %s: %w", cfg.Name, err)
	}
	defer l.release()
	head, err := st.Head(ctx, job)
	if err != nil {
		return rep, err
	}
	if run, err = st.BeginRun(ctx, l.token(), run); err != nil {
		return rep, fmt.Errorf("recording the crawl: %w", err)
	}
	rep.RunID = run.RunID
	// A store may return the empty counts as nil maps.
	run.Sources, run.Sinks = map[string]store.Count{}, map[string]store.Count{}
	c := &crawl{cfg: cfg, st: st, rep: rep, skipped: map[*file]bool{}}
	commit, err := c.do(ctx)
	rep.DurationMS = time.Since(start).Milliseconds()
	if err == nil {
		run.Status, run.FinishedAt = store.StatusSucceeded, time.Now().UTC()
		for _, t := range c.targets {
			run.Sources[t.ctx()] = c.count(t)
		}
		commit.Job, commit.Token, commit.BaseVersion, commit.Run = job, l.token(), head.Version, run
		if _, err = st.Commit(ctx, commit); err != nil {
			err = fmt.Errorf("committing the crawl (catalog changes and bookmark): %w", err)
		}
	}
	if err != nil {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = st.FailRun(fctx, job, l.token(), run.RunID, time.Now().UTC(), run, err.Error())
		return rep, err
	}
	rep.Status = store.StatusSucceeded
	return rep, nil
}

// count is a target's line of the run record: files opened, bytes read.
func (c *crawl) count(t *target) store.Count {
	var n store.Count
	t.tree.walk(func(d *folder) {
		for _, f := range d.files {
			n.Files += f.read.files
			n.Bytes += f.read.bytes
		}
	})
	return n
}

// do is the crawl between BeginRun and Commit: what it returns is the
// commit's bookmark and catalog changes.
func (c *crawl) do(ctx context.Context) (store.Commit, error) {
	cfg := c.cfg
	for _, tc := range cfg.Targets {
		t, err := listTarget(ctx, c.st, cfg.Job(), tc, cfg.Location(tc), cfg.TableLevel)
		if err != nil {
			return store.Commit{}, err
		}
		for _, s := range t.sinkSkips {
			c.rep.SkippedCount++
			if len(c.rep.Skipped) < MaxSkipped {
				c.rep.Skipped = append(c.rep.Skipped, s)
			}
		}
		c.targets = append(c.targets, t)
		c.rep.FilesListed += t.listed
		c.rep.FilesExcluded += t.excluded
	}
	tables, err := c.st.Tables(ctx, cfg.Database)
	if err != nil {
		return store.Commit{}, fmt.Errorf("reading the catalog: %w", err)
	}
	c.byLoc = map[string]*catalog.Table{}
	for i := range tables {
		c.byLoc[normLocation(tables[i].Location)] = &tables[i]
	}
	if err := classifyAll(ctx, c.pickAll(), cfg.SampleBytes.Bytes); err != nil {
		return store.Commit{}, err
	}
	g := &grouper{cfg: cfg, byLoc: c.byLoc, skip: c.skipAt}
	for _, t := range c.targets {
		for _, tf := range c.tableFolders(t) {
			var ref []string
			if ex := c.byLoc[normLocation(t.location(tf))]; ex != nil {
				for _, col := range ex.Columns {
					ref = append(ref, col.Name)
				}
			}
			tf.walk(func(d *folder) { settleFolder(d, ref, func(f *file, why string) { c.skipAt(t, d, f, why) }) })
			name := tf.name
			if tf.path == "" {
				name = path.Base(strings.TrimSuffix(filepath.ToSlash(t.root), "/"))
				if t.cfg.Table != "" {
					name = t.cfg.Table
				}
			}
			g.makeTable(t, tf, tableName(name))
		}
	}
	c.nameTables(g.plans)
	if len(g.plans) > cfg.MaxTables {
		names := make([]string, len(g.plans))
		for i, p := range g.plans {
			names[i] = p.name
		}
		slices.Sort(names)
		return store.Commit{}, &TooManyTablesError{Tables: names, Max: cfg.MaxTables}
	}
	ch, err := c.changes(ctx, g.plans, tables)
	if err != nil {
		return store.Commit{}, err
	}
	cm := c.bookmark()
	cm.Catalog = ch
	return cm, nil
}

// pickAll chooses the files to open: per folder, sample_files of its
// candidates. Every file is a candidate in recrawl everything and in a
// table folder the catalog has no table at or below; otherwise, the files of new
// folders (none of whose files the bookmark holds: new_folders_only) or
// the new and changed files (new_files_only).
func (c *crawl) pickAll() []*sampleJob {
	var jobs []*sampleJob
	for _, t := range c.targets {
		for _, tf := range c.tableFolders(t) {
			full := c.cfg.Recrawl == "everything" || !tableAtOrBelow(c.byLoc, t.location(tf), true)
			tf.walk(func(d *folder) {
				cand := func(*file) bool { return true }
				switch {
				case full:
				case c.cfg.Recrawl == "new_folders_only":
					isNew := !slices.ContainsFunc(d.files, func(f *file) bool { return !f.new || f.prev != nil })
					cand = func(*file) bool { return isNew }
				default:
					cand = func(f *file) bool { return f.new }
				}
				for _, f := range pick(d, c.cfg.SampleFiles, cand) {
					jobs = append(jobs, &sampleJob{t: t, f: f})
				}
			})
		}
	}
	return jobs
}

// tableFolders are a target's folders at table_level; files above them
// are skipped.
func (c *crawl) tableFolders(t *target) []*folder {
	var out []*folder
	var walk func(d *folder)
	walk = func(d *folder) {
		if d.depth == c.cfg.TableLevel {
			out = append(out, d)
			return
		}
		if len(d.files) > 0 && !c.skippedAll(d) {
			c.skipAt(t, d, nil, fmt.Sprintf("above table_level %d", c.cfg.TableLevel))
		}
		for _, ch := range d.children {
			walk(ch)
		}
	}
	walk(t.tree)
	return out
}

func (c *crawl) skippedAll(d *folder) bool {
	return !slices.ContainsFunc(d.files, func(f *file) bool { return !c.skipped[f] })
}

// skipAt records a skipped file (f), or every file of folder d not yet
// skipped (f nil), with the reason.
func (c *crawl) skipAt(t *target, d *folder, f *file, reason string) {
	s := Skip{Reason: reason}
	if f != nil {
		if c.skipped[f] {
			return
		}
		c.skipped[f] = true
		s.Path, s.Files = t.key(f), 1
	} else {
		for _, f := range d.files {
			if !c.skipped[f] {
				c.skipped[f] = true
				s.Files++
			}
		}
		if s.Files == 0 {
			return
		}
		s.Path = strings.TrimSuffix(t.location(d), "/") + "/"
	}
	c.rep.SkippedCount++
	if len(c.rep.Skipped) < MaxSkipped {
		c.rep.Skipped = append(c.rep.Skipped, s)
	}
}

// nameTables settles the names of new tables: a name that two tables
// would have, or that a table elsewhere has, gets a suffix from its
// location's hash, the same at every crawl.
func (c *crawl) nameTables(plans []*tablePlan) {
	count := map[string]int{}
	for _, p := range plans {
		count[p.name]++
	}
	taken := map[string]bool{}
	for _, t := range c.byLoc {
		taken[t.Name] = true
	}
	for _, p := range plans {
		if p.existing != nil {
			continue
		}
		if count[p.name] > 1 || taken[p.name] {
			p.name = fmt.Sprintf("%s_%08x", p.name, uint32(xxh3.HashString(normLocation(p.loc))))
		}
	}
}

// normLocation is a location as the catalog compares them: local folders
// cleaned, S3 prefixes ending in '/'.
func normLocation(loc string) string {
	if !objstore.IsLocal(loc) {
		return strings.TrimSuffix(loc, "/") + "/"
	}
	return filepath.Clean(strings.TrimPrefix(loc, "file://"))
}

// changes are the crawl's catalog changes, and its report's tables.
func (c *crawl) changes(ctx context.Context, plans []*tablePlan, tables []catalog.Table) (catalog.Changes, error) {
	cfg := c.cfg
	ch := catalog.Changes{Databases: []catalog.Database{{Name: cfg.Database}}}
	mapped := map[string]bool{}
	for _, p := range plans {
		nt := cfg.tableOf(p)
		r := reportOf(nt)
		p.dir.walk(func(d *folder) {
			for _, f := range d.files {
				if f.sampled {
					r.FilesSampled++
				}
			}
		})
		var have []catalog.Partition
		if ex := p.existing; ex != nil {
			mapped[ex.Name] = true
			r.Version = ex.Version
			changed := !sameDefinition(*ex, nt)
			switch {
			case !changed:
				r.Status = StatusUnchanged
			case cfg.SchemaChangePolicy.Update == "update":
				r.Status, r.Version = StatusUpdated, ex.Version+1
				r.Changes = tableDiff(*ex, nt)
				ch.Tables = append(ch.Tables, catalog.TableChange{Table: nt, Base: ex.Version})
			default:
				r.Status = StatusLogged
				r.Changes = tableDiff(*ex, nt)
				for i := range r.Changes {
					r.Changes[i] += " (not applied: update: log)"
				}
				r.Columns = ex.Columns
			}
			for q, err := range c.st.Partitions(ctx, cfg.Database, ex.Name) {
				if err != nil {
					return ch, fmt.Errorf("reading the partitions of %s.%s: %w", cfg.Database, ex.Name, err)
				}
				have = append(have, q)
			}
		} else {
			r.Status, r.Version = StatusCreated, 1
			ch.Tables = append(ch.Tables, catalog.TableChange{Table: nt})
		}
		cfg.partitionChanges(p, have, &ch, r)
		c.rep.Tables[p.name] = r
	}
	for _, t := range tables {
		if mapped[t.Name] || t.Parameters["crawler"] != cfg.Name || !c.underTargets(t.Location) {
			continue
		}
		if t.Deprecated && cfg.SchemaChangePolicy.Delete == "deprecate" {
			r := reportOf(t)
			r.Status = StatusDeprecated
			c.rep.Tables[t.Name] = r
			continue
		}
		c.rep.Tables[t.Name] = cfg.goneTable(t, &ch)
	}
	return ch, nil
}

// underTargets reports whether a location lies in one of the targets.
func (c *crawl) underTargets(loc string) bool {
	loc = normLocation(loc)
	for _, t := range c.targets {
		root := normLocation(t.root)
		if loc == root || strings.HasPrefix(loc, strings.TrimSuffix(root, "/")+"/") {
			return true
		}
	}
	return false
}

// bookmark is the crawl's bookmark commit: every new or changed file is
// recorded (the changed ones superseding their old record), each target's
// state counts its files.
func (c *crawl) bookmark() store.Commit {
	var cm store.Commit
	states := map[string]bookmark.SourceState{}
	for _, t := range c.targets {
		st := bookmark.SourceState{Kind: "files", Fingerprint: fmt.Sprintf("%016x", xxh3.HashString(t.loc+"\x00"+strings.Join(t.cfg.Exclude, "\x00"))),
			Describe: "crawler target " + t.loc}
		t.tree.walk(func(d *folder) {
			for _, f := range d.files {
				st.Files++
				st.Bytes += f.obj.Size
				if !f.new {
					continue
				}
				cm.Added = append(cm.Added, store.FileRecord{Ctx: t.ctx(), File: f.rec})
				c.rep.FilesNew++
				if f.prev != nil {
					cm.Superseded = append(cm.Superseded, store.FileRecord{Ctx: t.ctx(), File: *f.prev})
				}
			}
		})
		states[t.ctx()] = st
		c.rep.FilesOpened += c.count(t).Files
		c.rep.BytesRead += c.count(t).Bytes
	}
	if len(cm.Added) > 0 {
		cm.Advance, cm.Sources = true, states
	}
	return cm
}

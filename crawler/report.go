package crawler

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/dustin/go-humanize"

	"github.com/tidemark-etl/tidemark/catalog"
)

// Table statuses in a crawl report.
const (
	StatusCreated    = "created"    // a new table, version 1
	StatusUpdated    = "updated"    // a new version (columns added or widened, files back after a deprecation)
	StatusUnchanged  = "unchanged"  // nothing to change (partitions may still have been added or deprecated)
	StatusLogged     = "logged"     // a change that update: log left out; Changes says what
	StatusDeprecated = "deprecated" // its files are gone; marked deprecated (delete: deprecate)
	StatusDeleted    = "deleted"    // its files are gone; dropped (delete: delete)
	StatusGone       = "gone"       // its files are gone; left as it is (delete: log)
)

// MaxSkipped is how many skipped paths a report lists; SkippedCount
// counts them all.
const MaxSkipped = 100

// Report is what a crawl did: crawl --json prints it.
type Report struct {
	Crawler  string `json:"crawler"`
	Database string `json:"database"`
	RunID    string `json:"run_id,omitempty"`
	// Status is succeeded or failed; a failed crawl changed nothing.
	Status string                  `json:"status"`
	Tables map[string]*TableReport `json:"tables"`
	// Recrawl is the mode the crawl ran in.
	Recrawl string `json:"recrawl"`
	// FilesListed counts the files of the targets (excluded ones apart),
	// FilesOpened those the crawl opened to classify, BytesRead what it
	// read of them.
	FilesListed   int64 `json:"files_listed"`
	FilesExcluded int64 `json:"files_excluded"`
	FilesNew      int64 `json:"files_new"`
	FilesOpened   int64 `json:"files_opened"`
	BytesRead     int64 `json:"bytes_read"`
	// Skipped are the files and folders left out of every table, with why
	// (at most MaxSkipped; SkippedCount counts every one).
	Skipped      []Skip `json:"skipped"`
	SkippedCount int    `json:"skipped_count"`
	DurationMS   int64  `json:"duration_ms"`
	// Error, with ExitCode, is why a crawl failed (crawl --json only).
	Error    string `json:"error,omitempty"`
	ExitCode int    `json:"exit_code,omitempty"`
}

// TableReport is one table of a crawl report.
type TableReport struct {
	Status string `json:"status"`
	// Version is the table's version after the crawl (its current one for
	// unchanged, logged and gone tables).
	Version       int64             `json:"version"`
	Location      string            `json:"location"`
	Format        string            `json:"format"`
	Compression   string            `json:"compression,omitempty"`
	Options       map[string]string `json:"options,omitempty"`
	Columns       []catalog.Column  `json:"columns"`
	PartitionKeys []catalog.Column  `json:"partition_keys"`
	// Partitions counts the table's partitions after the crawl.
	Partitions           int `json:"partitions"`
	PartitionsAdded      int `json:"partitions_added"`
	PartitionsDeprecated int `json:"partitions_deprecated"`
	PartitionsDeleted    int `json:"partitions_deleted"`
	// PartitionsGone counts partitions whose files are gone that delete:
	// log left in place.
	PartitionsGone int `json:"partitions_gone"`
	// FilesSampled counts the table's files the crawl opened.
	FilesSampled int64 `json:"files_sampled"`
	// Changes says what changed in the table's definition (for logged:
	// what would have).
	Changes []string `json:"changes,omitempty"`
}

// Skip is a file, or a whole folder (Path ending in '/', Files its
// files), left out of every table.
type Skip struct {
	Path   string `json:"path"`
	Files  int    `json:"files"`
	Reason string `json:"reason"`
}

// Write prints the report for people.
func (r *Report) Write(w io.Writer) {
	fmt.Fprintf(w, "crawl %s of %s into database %s: %s (%s, %d ms)\n", r.RunID, r.Crawler, r.Database, r.Status, r.Recrawl, r.DurationMS)
	fmt.Fprintf(w, "  %d files listed (%d new, %d excluded), %d opened, %s read\n", r.FilesListed, r.FilesNew, r.FilesExcluded,
		r.FilesOpened, humanize.IBytes(uint64(r.BytesRead)))
	names := make([]string, 0, len(r.Tables))
	for n := range r.Tables {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		t := r.Tables[n]
		fmt.Fprintf(w, "  table %s.%s: %s, version %d, %s at %s, %d columns", r.Database, n, t.Status, t.Version, t.Format, t.Location, len(t.Columns))
		if len(t.PartitionKeys) > 0 {
			keys := make([]string, len(t.PartitionKeys))
			for i, k := range t.PartitionKeys {
				keys[i] = k.Name
			}
			fmt.Fprintf(w, ", %d partitions by %s", t.Partitions, strings.Join(keys, ", "))
		}
		for _, p := range []struct {
			n    int
			what string
		}{{t.PartitionsAdded, "added"}, {t.PartitionsDeprecated, "deprecated"}, {t.PartitionsDeleted, "deleted"},
			{t.PartitionsGone, "gone (kept: delete: log)"}} {
			if p.n > 0 {
				fmt.Fprintf(w, ", %d %s", p.n, p.what)
			}
		}
		fmt.Fprintln(w)
		for _, c := range t.Changes {
			fmt.Fprintf(w, "    %s\n", c)
		}
	}
	for _, s := range r.Skipped {
		if s.Files > 1 {
			fmt.Fprintf(w, "  skipped %s (%d files): %s\n", s.Path, s.Files, s.Reason)
			continue
		}
		fmt.Fprintf(w, "  skipped %s: %s\n", s.Path, s.Reason)
	}
	if more := r.SkippedCount - len(r.Skipped); more > 0 {
		fmt.Fprintf(w, "  … and %d more skipped (crawl --json lists the first %d)\n", more, MaxSkipped)
	}
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// crawlOut is what the scenario reads of crawl --json.
type crawlOut struct {
	Status      string `json:"status"`
	FilesListed int64  `json:"files_listed"`
	FilesOpened int64  `json:"files_opened"`
	BytesRead   int64  `json:"bytes_read"`
	Tables      map[string]struct {
		Status          string `json:"status"`
		Partitions      int    `json:"partitions"`
		PartitionsAdded int    `json:"partitions_added"`
	} `json:"tables"`
}

// benchCrawl measures tidemark crawl over many files in partition
// folders: the first crawl, then, after one new folder, an incremental
// crawl (new_folders_only) against a full one (everything) from the same
// state: time and files opened.
func benchCrawl(ctx context.Context, c *config) section {
	nFiles := c.CrawlDirs * c.CrawlPerDir
	s := section{Title: fmt.Sprintf("10. Crawl of %s files in %s partition folders", thousands(int64(nFiles)), thousands(int64(c.CrawlDirs)))}
	b := &s.Body
	target := fmt.Sprintf("opens %d", min(c.CrawlSample, c.CrawlPerDir))
	notMeasured := func(why string) section {
		b.p(why)
		s.Summary = append(s.Summary, summaryRow{"crawl: incremental crawl after one new folder, files opened", "—", "—", "—", target, "not measured"})
		return s
	}
	base := filepath.Join(c.work, "crawl")
	input := filepath.Join(base, "sales")
	logf("crawl: writing %s tiny files in %d folders", thousands(int64(nFiles)), c.CrawlDirs)
	genStart := time.Now()
	tr, err := genTree(input, c.CrawlDirs, c.CrawlPerDir)
	if err != nil {
		return notMeasured("Could not generate the input: " + err.Error())
	}
	b.p(fmt.Sprintf("Input: %s tiny CSV files (a header and 2 rows each, %s in all) in %s folders of %s (d0000/ … : "+
		"unnamed partitions, partition_0), written afresh into the scratch folder (in %s). The crawler samples "+
		"sample_files: %d per folder; its state is a SQLite store. The first crawl registers the table and its "+
		"partitions; then one folder of %d files is added and two crawls start from copies of the same state: "+
		"`recrawl: new_folders_only` and `recrawl: everything`.",
		thousands(int64(nFiles)), mb(tr.Bytes), thousands(int64(c.CrawlDirs)), thousands(int64(c.CrawlPerDir)),
		secs(time.Since(genStart)), c.CrawlSample, c.CrawlPerDir))
	if c.bin.tidemark == "" {
		return notMeasured("tidemark was not built: " + firstLine(fmt.Sprint(c.bin.tidemarkErr)))
	}
	crawler := func(name, recrawl string) (string, error) {
		p := filepath.Join(base, name+".yaml")
		text := fmt.Sprintf("crawler: bench\nstate: %s.db\ndatabase: bench_db\ntargets:\n  - path: %s\nsample_files: %d\nrecrawl: %s\nmax_tables: 10\n",
			name, input, c.CrawlSample, recrawl)
		return p, os.WriteFile(p, []byte(text), 0o644)
	}
	crawl := func(name, recrawl string) (measured, crawlOut, error) {
		p, err := crawler(name, recrawl)
		if err != nil {
			return measured{}, crawlOut{}, err
		}
		m := timeProcess(ctx, runSpec{Name: c.bin.tidemark, Args: []string{"crawl", p, "--json"}, Dir: base,
			Timeout: c.Timeout, Settle: c.Settle, StderrFile: filepath.Join(base, name+".log")})
		var out crawlOut
		if m.Err != nil {
			return m, out, m.Err
		}
		if err := json.Unmarshal(m.Stdout, &out); err != nil {
			return m, out, fmt.Errorf("crawl --json: %w", err)
		}
		return m, out, nil
	}
	logf("crawl: first crawl")
	first, firstOut, err := crawl("first", "new_folders_only")
	if err != nil {
		return notMeasured("The first crawl failed: " + err.Error())
	}
	if _, err := genTree(filepath.Join(base, "new"), 1, c.CrawlPerDir); err != nil {
		return notMeasured(err.Error())
	}
	if err := os.Rename(filepath.Join(base, "new", "d0000"), filepath.Join(input, fmt.Sprintf("d%04d", c.CrawlDirs))); err != nil {
		return notMeasured(err.Error())
	}
	type result struct {
		m   []time.Duration
		out crawlOut
		rss int64
	}
	var incr, full result
	for rep := range c.Reps {
		for _, r := range []struct {
			res     *result
			recrawl string
		}{{&incr, "new_folders_only"}, {&full, "everything"}} {
			name := fmt.Sprintf("%s-%d", r.recrawl, rep)
			if err := copyState(filepath.Join(base, "first.db"), filepath.Join(base, name+".db")); err != nil {
				return notMeasured(err.Error())
			}
			logf("crawl: %s, repetition %d", r.recrawl, rep+1)
			m, out, err := crawl(name, r.recrawl)
			if err != nil {
				return notMeasured(fmt.Sprintf("The %s crawl failed: %v", r.recrawl, err))
			}
			r.res.m, r.res.out, r.res.rss = append(r.res.m, m.Wall), out, max(r.res.rss, m.PeakRSS)
		}
	}
	row := func(what string, d time.Duration, o crawlOut, rss int64) []string {
		t := o.Tables["sales"]
		return []string{what, secs(d), thousands(o.FilesListed), thousands(o.FilesOpened), mb(o.BytesRead),
			fmt.Sprintf("%d (+%d)", t.Partitions, t.PartitionsAdded), mb(rss)}
	}
	b.table([]string{"crawl", "time", "files listed", "files opened", "read", "partitions (added)", "peak RSS"}, [][]string{
		row("first crawl (empty state)", first.Wall, firstOut, first.PeakRSS),
		row("after one new folder: new_folders_only", median(incr.m), incr.out, incr.rss),
		row("after one new folder: everything", median(full.m), full.out, full.rss),
	})
	b.p(fmt.Sprintf("Times of the two later crawls are the median of %d repetitions, each from a fresh copy of the state the "+
		"first crawl left. Both list every file (listing is what finds the new folder, and the partitions whose files are "+
		"gone); only the incremental crawl's bookmark lets it leave the known folders unopened. What the incremental crawl "+
		"still spends is that listing, the reading of its bookmark's record of every file and its commit: "+
		"no file of a known folder is opened.", c.Reps))
	want := int64(min(c.CrawlSample, c.CrawlPerDir))
	ok := incr.out.FilesOpened == want && incr.out.Tables["sales"].PartitionsAdded == 1
	s.Summary = append(s.Summary,
		summaryRow{"crawl: incremental crawl after one new folder, files opened", thousands(incr.out.FilesOpened),
			thousands(full.out.FilesOpened) + " (everything)", "—", target, passFail(ok)},
		summaryRow{"crawl: incremental crawl after one new folder, time", secs(median(incr.m)), secs(median(full.m)) + " (everything)",
			ratio(median(incr.m).Seconds() / median(full.m).Seconds()), "report", "done"})
	if !ok {
		s.Problems = append(s.Problems, fmt.Sprintf("crawl: the incremental crawl opened %d files and added %d partitions; want %d and 1",
			incr.out.FilesOpened, incr.out.Tables["sales"].PartitionsAdded, want))
	}
	return s
}

// copyState copies a SQLite state store (with its WAL) to a new name.
func copyState(from, to string) error {
	for _, suffix := range []string{"", "-wal"} {
		src, err := os.Open(from + suffix)
		if os.IsNotExist(err) && suffix != "" {
			continue
		}
		if err != nil {
			return err
		}
		dst, err := os.Create(to + suffix)
		if err != nil {
			src.Close()
			return err
		}
		_, err = io.Copy(dst, src)
		src.Close()
		if cerr := dst.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

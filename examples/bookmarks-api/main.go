// Command bookmarks-api shows tidemark's bookmark API without the runner:
// it asks which CSV files in a folder are new since the last successful
// run, counts their lines its own way, and commits. Run it twice: the second
// run finds nothing new until you add a file.
//
//	go run ./examples/bookmarks-api DIR [STATE]
package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tidemark-etl/tidemark"
	"github.com/tidemark-etl/tidemark/job"
	_ "github.com/tidemark-etl/tidemark/objstore/local"
	srcfiles "github.com/tidemark-etl/tidemark/source/files"
	_ "github.com/tidemark-etl/tidemark/store/sqlite"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: bookmarks-api DIR [STATE]")
		os.Exit(2)
	}
	dir := os.Args[1]
	state := filepath.Join(dir, ".tidemark", "state.db")
	if len(os.Args) > 2 {
		state = os.Args[2]
	}
	if err := run(context.Background(), dir, state); err != nil {
		fmt.Fprintln(os.Stderr, "bookmarks-api:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, dir, state string) error {
	b, err := tidemark.OpenBookmarks(ctx, state, "line-counter")
	if err != nil {
		return err
	}
	defer b.Close() // without Commit, nothing is recorded

	files, err := b.NewFiles(ctx, job.Source{Ctx: "landing", Config: &srcfiles.Config{Path: dir, Include: []string{"**/*.csv"}}})
	if err != nil {
		return err
	}
	var lines int64
	for _, f := range files {
		n, err := countLines(filepath.Join(dir, filepath.FromSlash(f.Path)))
		if err != nil {
			return err // the bookmark does not move; these files are new next time too
		}
		fmt.Printf("%s: %d lines\n", f.Path, n)
		lines += n
	}
	head, err := b.Commit(ctx, map[string]int64{"landing": lines})
	if err != nil {
		return err
	}
	fmt.Printf("%d new files, %d lines; bookmark version %d\n", len(files), lines, head.Version)
	return nil
}

func countLines(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var n int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n++
	}
	return n, sc.Err()
}

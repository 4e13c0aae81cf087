package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/tidemark-etl/tidemark"
	"github.com/tidemark-etl/tidemark/crawler"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/store"
)

func newCrawlCmd(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "crawl CRAWLERFILE",
		Short: "Crawl folders into the catalog: classify a sample of their files, register tables and partitions",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCrawl(cmd.Context(), g, args[0])
		},
	}
	c.Flags().StringVar(&g.state, "state", "", "state store location (overrides the crawler file's state:)")
	c.Flags().BoolVar(&g.json, "json", false, "print the crawl report as JSON on stdout")
	return c
}

// runCrawl is `tidemark crawl`.
func runCrawl(ctx context.Context, g *globals, path string) error {
	rep, err := crawlFile(ctx, g, path)
	if rep == nil {
		rep = &crawler.Report{Status: store.StatusFailed, Tables: map[string]*crawler.TableReport{}, Skipped: []crawler.Skip{}}
	}
	if err != nil {
		rep.Status, rep.Error, rep.ExitCode = store.StatusFailed, err.Error(), exitCode(err)
	}
	if g.json {
		if jerr := json.NewEncoder(os.Stdout).Encode(rep); jerr != nil && err == nil {
			return jerr
		}
	}
	if rep.RunID != "" && g.logFormat != "json" {
		rep.Write(os.Stderr)
	}
	if g.logFormat == "json" && err == nil {
		g.logger().Info("crawl finished", "crawler", rep.Crawler, "run_id", rep.RunID, "tables", len(rep.Tables),
			"files_opened", rep.FilesOpened, "skipped", rep.SkippedCount)
	}
	return err
}

// crawlFile loads a crawler file and crawls it into its state store.
func crawlFile(ctx context.Context, g *globals, path string) (*crawler.Report, error) {
	cfg, err := crawler.Load(path)
	if err != nil {
		return nil, err
	}
	abs, _ := filepath.Abs(path)
	spec := &job.Spec{File: path, Dir: filepath.Dir(abs), State: cfg.State}
	return crawlInto(ctx, g, cfg, tidemark.StateLocation(g.state, spec), g.logger())
}

// crawlInto crawls cfg into the state store at loc.
func crawlInto(ctx context.Context, g *globals, cfg *crawler.Config, loc string, log *slog.Logger) (*crawler.Report, error) {
	st, err := tidemark.OpenState(ctx, loc)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	host, err := hostID("")
	if err != nil {
		return nil, err
	}
	return crawler.Crawl(ctx, cfg, st, crawler.Options{Logger: log, Host: host})
}

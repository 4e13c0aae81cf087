package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/tidemark-etl/tidemark"
	"github.com/tidemark-etl/tidemark/glue"
	"github.com/tidemark-etl/tidemark/internal/secret"
	"github.com/tidemark-etl/tidemark/job"
	"github.com/tidemark-etl/tidemark/store"
)

// glueFlags are `tidemark glue`'s flags.
type glueFlags struct {
	python string
	dir    string
	listen string
}

func newGlueCmd(g *globals) *cobra.Command {
	f := &glueFlags{}
	c := &cobra.Command{
		Use:   "glue",
		Short: "Run Glue-style PySpark scripts with tidemark's bookmarks",
	}
	run := &cobra.Command{
		Use:   "run [--state URL] [--python PATH] SCRIPT.py ARGS...",
		Short: "Run a Glue-style PySpark script; ARGS are its own argv (--JOB_NAME, --job-bookmark-option, ...)",
		Args:  minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runGlue(cmd.Context(), g, f, args[0], args[1:])
		},
	}
	run.Flags().SetInterspersed(false) // everything after SCRIPT.py is the script's
	run.Flags().StringVar(&g.state, "state", "", "state store location (default: $TIDEMARK_STATE, else .tidemark/state.db next to the script)")
	run.Flags().StringVar(&f.python, "python", "", "the Python that runs the script (default: $TIDEMARK_PYTHON, else python3)")
	run.Flags().BoolVar(&g.json, "json", false, "print each run's summary as JSON on stdout, one line per run (run --json's object); "+
		"the script's own stdout then goes to stderr")
	serve := &cobra.Command{
		Use:   "serve [--state URL] [--dir DIR] [--listen 127.0.0.1:0]",
		Short: "Serve the bookmark API for one program until its stdin closes (what awsglue starts when not run by `glue run`)",
		Args:  exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runGlueServe(cmd.Context(), g, f, cmd.InOrStdin(), cmd.OutOrStdout())
		},
	}
	serve.Flags().StringVar(&g.state, "state", "", "state store location (default: $TIDEMARK_STATE, else .tidemark/state.db in --dir)")
	serve.Flags().StringVar(&f.dir, "dir", "", "the folder relative paths are taken from (the script's; default: the working directory)")
	serve.Flags().StringVar(&f.listen, "listen", "127.0.0.1:0", "loopback address to listen on")
	c.AddCommand(run, serve)
	return c
}

// runGlue is `tidemark glue run`.
func runGlue(ctx context.Context, g *globals, f *glueFlags, script string, args []string) error {
	abs, err := filepath.Abs(script)
	if err != nil {
		return err
	}
	state := tidemark.StateLocation(g.state, &job.Spec{Dir: filepath.Dir(abs)})
	host, err := hostID("")
	if err != nil {
		return err
	}
	log := g.logger()
	var outs []runOutput
	summary := func(r *tidemark.Result, err error) {
		if g.json {
			outs = append(outs, glueOutput(r, err))
		}
		if g.logFormat != "json" {
			printSummary(r)
			return
		}
		attrs := []any{"run_id", r.RunID, "status", r.Status, "mode", r.Mode, "attempt", r.Attempt,
			"duration_ms", r.DurationMS, "sources", r.Sources, "sinks", r.Sinks}
		if r.Error != "" {
			log.Error("run finished", append(attrs, "error", r.Error)...)
			return
		}
		log.Info("run finished", attrs...)
	}
	o := glue.LaunchOptions{Script: script, Args: args, Python: f.python, State: state,
		HostID: host, Stdin: os.Stdin, Log: log, Summary: summary}
	if g.json {
		o.Stdout = os.Stderr // stdout holds the JSON lines only
	}
	err = glue.Launch(ctx, o)
	if g.json {
		g.jsonDone = true
		if len(outs) == 0 && err != nil {
			// No run to tell of (the script failed before it began one, or
			// its run was refused): the failure, as run --json tells one.
			out := runOutputOf(nil, &runOptions{}, nil, err)
			out.Error = secret.Redact(out.Error)
			outs = append(outs, out)
		}
		enc := json.NewEncoder(os.Stdout)
		for _, out := range outs {
			if jerr := enc.Encode(out); jerr != nil && err == nil {
				err = jerr
			}
		}
	}
	return err
}

// glueOutput is one Glue run's line of glue run --json: run --json's
// object for it.
func glueOutput(r *tidemark.Result, err error) runOutput {
	out := runOutput{Result: *r}
	if err == nil && r.Status == store.StatusFailed { // aborted by the script
		err = errors.New(r.Error)
	}
	if err != nil {
		out.ExitCode, out.ErrorKind = exitCode(err), errorKind(err)
	}
	return out
}

// runGlueServe is `tidemark glue serve`: it prints {"url": ...} on one
// line once it listens, then serves until stdin closes (its program
// ended) or a signal, aborting the runs left open.
func runGlueServe(ctx context.Context, g *globals, f *glueFlags, stdin io.Reader, stdout io.Writer) error {
	token := os.Getenv("TIDEMARK_GLUE_TOKEN")
	if token == "" {
		return usageError{errors.New("glue serve: set TIDEMARK_GLUE_TOKEN to the bearer token its clients send")}
	}
	dir := f.dir
	if dir == "" {
		dir, _ = os.Getwd()
	}
	dir, _ = filepath.Abs(dir)
	lhost, _, err := net.SplitHostPort(f.listen)
	if ip := net.ParseIP(lhost); err != nil || ip == nil || !ip.IsLoopback() {
		return usageError{fmt.Errorf("--listen %q: want a loopback host:port, e.g. 127.0.0.1:0", f.listen)}
	}
	state := tidemark.StateLocation(g.state, &job.Spec{Dir: dir})
	host, err := hostID("")
	if err != nil {
		return err
	}
	sv := &glue.Server{State: state, Dir: dir, Token: token, HostID: host, Log: g.logger()}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return usageError{fmt.Errorf("--listen %s: %w", f.listen, err)}
	}
	hs := &http.Server{Handler: sv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	if err := json.NewEncoder(stdout).Encode(map[string]string{"url": "http://" + ln.Addr().String()}); err != nil {
		return err
	}
	gone := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, stdin)
		close(gone)
	}()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	select {
	case <-gone:
	case <-sigs:
	case <-ctx.Done():
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	sv.Close(actx, "the program ended without job.commit(); nothing it wrote was published")
	return hs.Shutdown(actx)
}

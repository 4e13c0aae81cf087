package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tidemark-etl/tidemark/job"
)

// defaultJobFile is the file init writes when given none.
const defaultJobFile = "job.yaml"

// initOptions are the flags of init.
type initOptions struct {
	source, format, sink string
}

func newInitCmd() *cobra.Command {
	o := &initOptions{}
	c := &cobra.Command{
		Use:   "init [--source PATH --format F --sink PATH] [JOBFILE]",
		Short: "Write a job file that reads a folder of files into another (default " + defaultJobFile + ")",
		Long: "Write a job file: one source (a local folder or s3:// prefix of CSV, JSON Lines or Parquet files) " +
			"and one sink (Parquet files, appended run by run). With --source and --sink it asks nothing; " +
			"without them it asks on a terminal, and off one it says which flags to give. " +
			"It never overwrites a file. Relative paths are taken from the working folder and written " +
			"relative to the job file, as the job reads them.",
		Args: func(cmd *cobra.Command, args []string) error {
			if err := cobra.MaximumNArgs(1)(cmd, args); err != nil {
				return usageError{err}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			path := defaultJobFile
			if len(args) == 1 {
				path = args[0]
			}
			in := cmd.InOrStdin()
			return runInit(o, path, in, canAsk(in), cmd.ErrOrStderr())
		},
	}
	c.Flags().StringVar(&o.source, "source", "", "the folder (or s3:// prefix) the job reads")
	c.Flags().StringVar(&o.format, "format", "", "the source's files: csv, json (JSON Lines; jsonl, ndjson too) or parquet "+
		"(default: told by the files in a local --source, else csv)")
	c.Flags().StringVar(&o.sink, "sink", "", "the folder (or s3:// prefix) the job writes Parquet files to")
	return c
}

// canAsk reports whether r is a terminal one can ask on.
func canAsk(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && isTerminal(f)
}

// runInit is `tidemark init`: it writes the job file at path, asking on
// in for what the flags do not say when tty, and says what it did and
// what to do next on out.
func runInit(o *initOptions, path string, in io.Reader, tty bool, out io.Writer) error {
	if _, err := os.Lstat(path); err == nil {
		return usageError{fmt.Errorf("%s exists: init never overwrites a file; give another JOBFILE or remove it", path)}
	}
	if o.source == "" || o.sink == "" {
		if !tty {
			var missing []string
			if o.source == "" {
				missing = append(missing, "--source")
			}
			if o.sink == "" {
				missing = append(missing, "--sink")
			}
			return usageError{fmt.Errorf("init needs %s when there is no terminal to ask on: "+
				"tidemark init --source FOLDER --format csv|json|parquet --sink FOLDER [%s], "+
				"e.g. tidemark init --source landing/ --format csv --sink out/ %s",
				strings.Join(missing, " and "), defaultJobFile, path)}
		}
		if err := ask(o, in, out); err != nil {
			return err
		}
	}
	name := jobName(path)
	sc := job.Scaffold{Job: name, Source: relativeTo(path, o.source), Format: o.format, Sink: relativeTo(path, o.sink)}
	guessed := ""
	if sc.Format == "" {
		sc.Format, guessed = guessFormat(o.source)
	}
	data, err := sc.Bytes()
	if err != nil {
		return usageError{fmt.Errorf("writing a job of --source %q --format %q --sink %q: %w", o.source, sc.Format, o.sink, err)}
	}
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	// O_EXCL: a file made since the check above is not overwritten either.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return usageError{fmt.Errorf("%s exists: init never overwrites a file; give another JOBFILE or remove it", path)}
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return fmt.Errorf("writing %s: %w", path, err)
	}
	fmt.Fprintf(out, "wrote %s: job %s reads %s (%s) into %s (parquet)\n", path, name, sc.Source, job.Format(sc.Format), sc.Sink)
	if guessed != "" {
		fmt.Fprintf(out, "the format %s was told by %s; change format: in the file if it is wrong\n", sc.Format, guessed)
	}
	fmt.Fprintf(out, "next: tidemark plan %s (what the first run would read), then tidemark run %s\n", path, path)
	return nil
}

// ask asks on in for what the flags left out, offering defaults.
func ask(o *initOptions, in io.Reader, out io.Writer) error {
	r := bufio.NewReader(in)
	q := func(prompt, def string) (string, error) {
		if def != "" {
			fmt.Fprintf(out, "%s [%s]: ", prompt, def)
		} else {
			fmt.Fprintf(out, "%s: ", prompt)
		}
		line, err := r.ReadString('\n')
		if err != nil && (err != io.EOF || line == "") {
			return "", usageError{fmt.Errorf("init: no answer to %q", prompt)}
		}
		if line = strings.TrimSpace(line); line == "" {
			line = def
		}
		return line, nil
	}
	var err error
	for o.source == "" {
		if o.source, err = q("the folder (or s3:// prefix) to read", ""); err != nil {
			return err
		}
	}
	if o.format == "" {
		def, _ := guessFormat(o.source)
		if o.format, err = q("its files' format: csv, json (JSON Lines) or parquet", def); err != nil {
			return err
		}
	}
	if o.sink == "" {
		if o.sink, err = q("the folder (or s3:// prefix) to write Parquet files to", "out/"); err != nil {
			return err
		}
	}
	return nil
}

// jobName makes a job name of the job file's name (sales.yaml → sales).
func jobName(path string) string {
	base := filepath.Base(path)
	name := strings.TrimSuffix(base, filepath.Ext(base))
	if !job.ValidName(name) {
		return "my-job"
	}
	return name
}

// relativeTo rewrites a local relative path given from the working folder
// as the job file at jobPath reads it (relative to its folder); URLs and
// absolute paths stay as they are.
func relativeTo(jobPath, p string) string {
	if p == "" || strings.Contains(p, "://") || filepath.IsAbs(p) {
		return p
	}
	dir, err := filepath.Abs(filepath.Dir(jobPath))
	if err != nil {
		return p
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	rel, err := filepath.Rel(dir, abs)
	if err != nil {
		return p
	}
	rel = filepath.ToSlash(rel)
	if strings.HasSuffix(p, "/") && !strings.HasSuffix(rel, "/") {
		rel += "/"
	}
	return rel
}

// guessFormat tells a local folder's format by the first data file in
// it (and the file that told it); csv when none tells.
func guessFormat(source string) (format, by string) {
	if strings.Contains(source, "://") {
		return "csv", ""
	}
	var found, file string
	_ = filepath.WalkDir(source, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || found != "" {
			return nil
		}
		name := strings.TrimSuffix(strings.TrimSuffix(strings.ToLower(d.Name()), ".gz"), ".zst")
		switch filepath.Ext(name) {
		case ".csv", ".tsv":
			found = "csv"
		case ".json", ".jsonl", ".ndjson":
			found = "json"
		case ".parquet":
			found = "parquet"
		}
		if found != "" {
			file = p
			return fs.SkipAll
		}
		return nil
	})
	if found == "" {
		return "csv", ""
	}
	return found, file
}

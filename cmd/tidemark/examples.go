package main

import (
	"strings"

	"github.com/spf13/cobra"
)

// examples are what each command's --help shows under Examples, by
// command path. They are kept here, together, so that the test that walks
// the command tree (every command has some, each parses) has one place to
// point at; a command that sets its own Example keeps it.
var examples = map[string]string{
	"tidemark": `
# write a job file, see what its first run would read, run it
tidemark init --source landing/ --format csv --sink out/ sales.yaml
tidemark plan sales.yaml
tidemark run sales.yaml
tidemark runs sales.yaml`,

	"tidemark init": `
# ask nothing: a folder of CSV files into Parquet files
tidemark init --source landing/ --format csv --sink out/ sales.yaml
# JSON Lines on S3 into a local folder
tidemark init --source s3://your-input-bucket/events/ --format jsonl --sink out/events/ events.yaml
# on a terminal, ask for what the flags do not say
tidemark init sales.yaml`,

	"tidemark run": `
# read what is new since the last run, write the sinks, advance the bookmark
tidemark run sales.yaml
# read everything again without touching the bookmark
tidemark run sales.yaml --job-bookmark-option disable
# re-read exactly what runs after RUN1 up to RUN2 read (Glue's rewind window)
tidemark run sales.yaml --job-bookmark-option pause --job-bookmark-from RUN1 --job-bookmark-to RUN2
# state in PostgreSQL, summary as JSON for a script
tidemark run sales.yaml --state postgres://etl@db.internal:5432/tidemark --json`,

	"tidemark plan": `
# what the next run would read, and what it would leave for later; changes nothing
tidemark plan sales.yaml
tidemark plan sales.yaml --json`,

	"tidemark runs": `
tidemark runs sales.yaml
# by job name, in the state store given
tidemark runs sales-daily --state .tidemark/state.db --json`,

	"tidemark bookmark": `
tidemark bookmark show sales.yaml
tidemark bookmark reset sales.yaml --to-run RUN --purge-output --dry-run`,

	"tidemark bookmark show": `
tidemark bookmark show sales.yaml
tidemark bookmark show sales-daily --state s3://your-state-bucket/tidemark/ --json`,

	"tidemark bookmark reset": `
# see what a rewind would undo and delete, then do it
tidemark bookmark reset sales.yaml --to-run RUN --purge-output --dry-run
tidemark bookmark reset sales.yaml --to-run RUN --purge-output
# forget everything: the next run reads all input again
tidemark bookmark reset sales.yaml`,

	"tidemark serve": `
# the dashboard on http://127.0.0.1:8484/, the API under /api/v1/
tidemark serve --state .tidemark/state.db
# reachable from other hosts, resets allowed with the token in $TIDEMARK_TOKEN
tidemark serve --state postgres://etl@db.internal:5432/tidemark --listen 0.0.0.0:8484 --token-env TIDEMARK_TOKEN`,

	"tidemark version": `
tidemark version`,

	"tidemark state": `
tidemark state copy --from .tidemark/state.db --to postgres://etl@db.internal:5432/tidemark`,

	"tidemark state copy": `
# move every job from the local SQLite file to PostgreSQL
tidemark state copy --from .tidemark/state.db --to postgres://etl@db.internal:5432/tidemark
# one job to S3
tidemark state copy --from .tidemark/state.db --to s3://your-state-bucket/tidemark/ --job sales-daily`,

	"tidemark crawl": `
tidemark crawl sales-crawler.yaml
tidemark crawl sales-crawler.yaml --state .tidemark/state.db --json`,

	"tidemark catalog": `
tidemark catalog databases
tidemark catalog tables sales_db
tidemark catalog show sales_db.orders`,

	"tidemark catalog databases": `
tidemark catalog databases --state .tidemark/state.db`,

	"tidemark catalog tables": `
tidemark catalog tables sales_db
tidemark catalog tables sales_db --json`,

	"tidemark catalog show": `
tidemark catalog show sales_db.orders
tidemark catalog show sales_db.orders --version 2 --json`,

	"tidemark catalog diff": `
# what changed between versions 1 and 3: columns, partitions
tidemark catalog diff sales_db.orders 1 3`,

	"tidemark catalog ddl": `
# statements that make the table queryable elsewhere
tidemark catalog ddl sales_db.orders --dialect duckdb
tidemark catalog ddl sales_db.orders --dialect trino`,

	"tidemark catalog drop": `
# forget the table (its files stay where they are)
tidemark catalog drop sales_db.orders`,

	"tidemark glue": `
tidemark glue run job.py --JOB_NAME sales --job-bookmark-option job-bookmark-enable`,

	"tidemark glue run": `
# a Glue script as it is, with its own arguments after it
tidemark glue run job.py --JOB_NAME sales --job-bookmark-option job-bookmark-enable
# with the Python of a virtual environment that has pyspark
tidemark glue run --python .venv/bin/python --state .tidemark/state.db job.py --JOB_NAME sales`,

	"tidemark glue serve": `
# what awsglue starts by itself when a script is run without glue run
tidemark glue serve --dir . --state .tidemark/state.db`,
}

// addExamples sets the Example of every command under root that has none.
func addExamples(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Example == "" {
			c.Example = indent(examples[c.CommandPath()])
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// indent trims an example and indents its lines as cobra's own help is.
func indent(ex string) string {
	ex = strings.TrimSpace(ex)
	if ex == "" {
		return ""
	}
	return "  " + strings.ReplaceAll(ex, "\n", "\n  ")
}

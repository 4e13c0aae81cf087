package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/tidemark-etl/tidemark"
	"github.com/tidemark-etl/tidemark/catalog"
	"github.com/tidemark-etl/tidemark/catalog/ddl"
	"github.com/tidemark-etl/tidemark/store"
)

// catalogOptions are the flags of the catalog commands.
type catalogOptions struct {
	version int64
	dialect string
}

func newCatalogCmd(g *globals) *cobra.Command {
	o := &catalogOptions{}
	c := &cobra.Command{
		Use:   "catalog",
		Short: "Show, compare, export and drop the data catalog's tables",
		Args:  exactArgs(0),
	}
	verb := func(use, short string, n int, run func(ctx context.Context, args []string) error) *cobra.Command {
		v := &cobra.Command{Use: use, Short: short, Args: exactArgs(n),
			RunE: func(cmd *cobra.Command, args []string) error { return run(cmd.Context(), args) }}
		v.Flags().StringVar(&g.state, "state", "", "state store location")
		v.Flags().BoolVar(&g.json, "json", false, "print JSON on stdout")
		c.AddCommand(v)
		return v
	}
	verb("databases", "List the catalog's databases", 0, func(ctx context.Context, _ []string) error {
		return runCatalogDatabases(ctx, g)
	})
	verb("tables DB", "List a database's tables", 1, func(ctx context.Context, args []string) error {
		return runCatalogTables(ctx, g, args[0])
	})
	show := verb("show DB.TABLE", "Show a table: columns, partitions, versions", 1, func(ctx context.Context, args []string) error {
		return runCatalogShow(ctx, g, args[0], o.version)
	})
	show.Flags().Int64Var(&o.version, "version", 0, "show this version of the table (default: the current one)")
	verb("diff DB.TABLE V1 V2", "Show what changed between two versions of a table", 3, func(ctx context.Context, args []string) error {
		return runCatalogDiff(ctx, g, args[0], args[1], args[2])
	})
	d := verb("ddl DB.TABLE", "Print the statements that make a table queryable in DuckDB, Spark or Trino", 1,
		func(ctx context.Context, args []string) error { return runCatalogDDL(ctx, g, args[0], o.dialect) })
	d.Flags().StringVar(&o.dialect, "dialect", "", "duckdb | spark | trino (required)")
	verb("drop DB.TABLE", "Drop a table: every version and partition (the files stay)", 1, func(ctx context.Context, args []string) error {
		return runCatalogDrop(ctx, g, args[0])
	})
	return c
}

// openCatalog opens the existing state store the catalog is kept in
// (read-only for the commands that only read).
func openCatalog(ctx context.Context, g *globals, readOnly bool) (store.Store, error) {
	return tidemark.OpenExistingState(ctx, g.state, nil, readOnly)
}

// findTable resolves DB.TABLE to one version of it; a bad name or a
// table that is not there is a usage error naming what is.
func findTable(ctx context.Context, st store.Store, name string, version int64) (catalog.Table, error) {
	db, tbl, err := catalog.ParseName(name)
	if err != nil {
		return catalog.Table{}, usageError{err}
	}
	t, err := catalog.Find(ctx, st, db, tbl, version)
	if errors.Is(err, catalog.ErrNotFound) {
		return catalog.Table{}, refused{err} // exit 2, without --help's hint: the command was right
	}
	return t, err
}

// printJSON writes v to stdout as JSON.
func printJSON(v any) error {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// runCatalogDatabases is `tidemark catalog databases`.
func runCatalogDatabases(ctx context.Context, g *globals) error {
	st, err := openCatalog(ctx, g, true)
	if err != nil {
		return err
	}
	defer st.Close()
	dbs, err := st.Databases(ctx)
	if err != nil {
		return err
	}
	if g.json {
		if dbs == nil {
			dbs = []catalog.Database{}
		}
		return printJSON(dbs)
	}
	if len(dbs) == 0 {
		fmt.Println("the catalog has no databases (a crawl, or a sink with catalog: {update: true}, makes them)")
		return nil
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "DATABASE\tTABLES\tCREATED\tDESCRIPTION")
	for _, d := range dbs {
		tables, err := st.Tables(ctx, d.Name)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s\t%d\t%s\t%s\n", d.Name, len(tables), d.CreatedAt.Local().Format(time.DateTime), d.Description)
	}
	return w.Flush()
}

// runCatalogTables is `tidemark catalog tables DB`.
func runCatalogTables(ctx context.Context, g *globals, db string) error {
	st, err := openCatalog(ctx, g, true)
	if err != nil {
		return err
	}
	defer st.Close()
	dbs, err := st.Databases(ctx)
	if err != nil {
		return err
	}
	if !hasDatabase(dbs, db) {
		return refused{catalog.MissingError(ctx, st, db, "")}
	}
	tables, err := st.Tables(ctx, db)
	if err != nil {
		return err
	}
	views := make([]tableView, 0, len(tables))
	for _, t := range tables {
		v, err := viewOf(ctx, st, t, false)
		if err != nil {
			return err
		}
		views = append(views, v.tableView)
	}
	if g.json {
		return printJSON(views)
	}
	if len(views) == 0 {
		fmt.Printf("database %s has no tables\n", db)
		return nil
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "TABLE\tVERSION\tFORMAT\tCOLUMNS\tPARTITIONS\tUPDATED\tLOCATION")
	for _, v := range views {
		name := v.Table
		if v.Deprecated {
			name += " (deprecated)"
		}
		fmt.Fprintf(w, "%s\t%d\t%s\t%d\t%d\t%s\t%s\n", name, v.Version, v.Format, len(v.Columns), v.PartitionCount,
			v.UpdatedAt.Local().Format(time.DateTime), v.Location)
	}
	return w.Flush()
}

func hasDatabase(dbs []catalog.Database, name string) bool {
	for _, d := range dbs {
		if d.Name == name {
			return true
		}
	}
	return false
}

// runCatalogShow is `tidemark catalog show DB.TABLE [--version N]`.
func runCatalogShow(ctx context.Context, g *globals, name string, version int64) error {
	if version < 0 {
		return usageError{fmt.Errorf("--version %d: versions count from 1", version)}
	}
	st, err := openCatalog(ctx, g, true)
	if err != nil {
		return err
	}
	defer st.Close()
	t, err := findTable(ctx, st, name, version)
	if err != nil {
		return err
	}
	v, err := viewOf(ctx, st, t, true)
	if err != nil {
		return err
	}
	if g.json {
		return printJSON(v)
	}
	printTable(v)
	return nil
}

// printTable writes a table's view for people.
func printTable(v showView) {
	fmt.Printf("table     %s.%s (version %d of %d, updated %s)\n", v.Database, v.Table, v.Version, len(v.Versions),
		v.UpdatedAt.Local().Format(time.DateTime))
	fmt.Printf("location  %s\n", v.Location)
	format := v.Format
	if v.Compression != "" {
		format += " (" + v.Compression + ")"
	}
	fmt.Printf("format    %s\n", format)
	for _, k := range sortedKeys(v.Options) {
		fmt.Printf("option    %s = %s\n", k, v.Options[k])
	}
	if v.Deprecated {
		fmt.Println("deprecated: its files were gone at the last crawl")
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "\nCOLUMN\tTYPE\t")
	for _, c := range v.Columns {
		fmt.Fprintf(w, "%s\t%s\t\n", c.Name, c.Type)
	}
	for _, c := range v.PartitionKeys {
		fmt.Fprintf(w, "%s\t%s\t(partition key)\n", c.Name, c.Type)
	}
	w.Flush()
	if len(v.PartitionKeys) > 0 {
		fmt.Printf("\n%d partitions\n", len(v.Partitions))
		w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
		for _, p := range v.Partitions {
			parts := make([]string, 0, len(v.PartitionKeys))
			for _, k := range v.PartitionKeys {
				parts = append(parts, k.Name+"="+p.Values[k.Name])
			}
			note := ""
			if p.Deprecated {
				note = "(deprecated)"
			}
			fmt.Fprintf(w, "  %s\t%s\t%s\n", strings.Join(parts, "/"), p.Location, note)
		}
		w.Flush()
	}
	if len(v.Versions) > 1 {
		fmt.Println("\nversions")
		for _, ver := range v.Versions {
			fmt.Printf("  %d  %s  %s\n", ver.Version, ver.UpdatedAt.Local().Format(time.DateTime), ver.Summary)
		}
	}
	for _, k := range sortedKeys(v.Parameters) {
		fmt.Printf("parameter %s = %s\n", k, v.Parameters[k])
	}
}

// runCatalogDiff is `tidemark catalog diff DB.TABLE V1 V2`.
func runCatalogDiff(ctx context.Context, g *globals, name, v1, v2 string) error {
	var vs [2]int64
	for i, s := range []string{v1, v2} {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 {
			return usageError{fmt.Errorf("version %q: want a version number (1, 2, ...; see `tidemark catalog show %s`)", s, name)}
		}
		vs[i] = n
	}
	st, err := openCatalog(ctx, g, true)
	if err != nil {
		return err
	}
	defer st.Close()
	a, err := findTable(ctx, st, name, vs[0])
	if err != nil {
		return err
	}
	b, err := findTable(ctx, st, name, vs[1])
	if err != nil {
		return err
	}
	diff := catalog.Diff(a, b)
	if g.json {
		if diff == nil {
			diff = []catalog.Difference{}
		}
		return printJSON(map[string]any{"database": a.Database, "table": a.Name, "from": vs[0], "to": vs[1], "changes": diff})
	}
	if len(diff) == 0 {
		fmt.Printf("%s.%s versions %d and %d do not differ\n", a.Database, a.Name, vs[0], vs[1])
		return nil
	}
	fmt.Printf("%s.%s from version %d to %d:\n", a.Database, a.Name, vs[0], vs[1])
	for _, d := range diff {
		fmt.Println("  " + differenceLine(d))
	}
	return nil
}

// differenceLine says one difference for people.
func differenceLine(d catalog.Difference) string {
	show := func(s string) string {
		if s == "" {
			return "(none)"
		}
		return s
	}
	switch d.What {
	case "column added":
		return fmt.Sprintf("+ column %s %s", d.Name, d.To)
	case "column dropped":
		return fmt.Sprintf("- column %s %s", d.Name, d.From)
	case "column type":
		return fmt.Sprintf("~ column %s: %s -> %s", d.Name, d.From, d.To)
	case "option":
		return fmt.Sprintf("~ option %s: %s -> %s", d.Name, show(d.From), show(d.To))
	}
	return fmt.Sprintf("~ %s: %s -> %s", d.What, show(d.From), show(d.To))
}

// runCatalogDDL is `tidemark catalog ddl DB.TABLE --dialect D`.
func runCatalogDDL(ctx context.Context, g *globals, name, dialect string) error {
	if dialect == "" {
		return usageError{fmt.Errorf("--dialect is required: one of %s", strings.Join(ddl.Dialects, ", "))}
	}
	if !slices.Contains(ddl.Dialects, dialect) {
		return usageError{fmt.Errorf("--dialect %q: want one of %s", dialect, strings.Join(ddl.Dialects, ", "))}
	}
	st, err := openCatalog(ctx, g, true)
	if err != nil {
		return err
	}
	defer st.Close()
	t, err := findTable(ctx, st, name, 0)
	if err != nil {
		return err
	}
	var parts []catalog.Partition
	for p, err := range st.Partitions(ctx, t.Database, t.Name) {
		if err != nil {
			return err
		}
		parts = append(parts, p)
	}
	stmts, err := ddl.Statements(dialect, t, parts)
	if err != nil {
		return err
	}
	if g.json {
		return printJSON(map[string]any{"database": t.Database, "table": t.Name, "version": t.Version,
			"dialect": dialect, "statements": stmts})
	}
	for _, s := range stmts {
		fmt.Println(s + ";")
	}
	return nil
}

// runCatalogDrop is `tidemark catalog drop DB.TABLE`.
func runCatalogDrop(ctx context.Context, g *globals, name string) error {
	st, err := openCatalog(ctx, g, false)
	if err != nil {
		return err
	}
	defer st.Close()
	t, err := findTable(ctx, st, name, 0)
	if err != nil {
		return err
	}
	n := 0
	for _, err := range st.Partitions(ctx, t.Database, t.Name) {
		if err != nil {
			return err
		}
		n++
	}
	err = st.ApplyCatalog(ctx, catalog.Changes{Tables: []catalog.TableChange{{Table: t, Base: t.Version, Drop: true}}})
	if errors.Is(err, catalog.ErrConflict) {
		return fmt.Errorf("%w; it changed while being dropped: run the command again", err)
	}
	if err != nil {
		return err
	}
	if g.json {
		return printJSON(map[string]any{"database": t.Database, "table": t.Name, "dropped_version": t.Version, "partitions": n})
	}
	fmt.Fprintf(os.Stderr, "dropped %s.%s (version %d, %d partitions); its files at %s are left as they are\n",
		t.Database, t.Name, t.Version, n, t.Location)
	return nil
}

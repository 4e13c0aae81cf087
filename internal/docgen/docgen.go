// Package docgen writes the generated pages of the docs site (mkdocs.yml,
// docs/): the command-line reference from the cobra commands themselves,
// so that it cannot drift from what --help says, and the splicing of a
// generated section between two markers of a hand-written page.
package docgen

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// CLIBegin and CLIEnd mark the generated section of docs/reference/cli.md.
const (
	CLIBegin = "<!-- BEGIN command reference: generated from the cobra commands " +
		"(go test ./cmd/tidemark -run TestCLIReference -update); do not edit -->"
	CLIEnd = "<!-- END command reference -->"
)

// CLIReference is the reference of root and every command under it, in
// Markdown: for each available command, depth first in the order --help
// lists them, its synopsis, description, usage line, examples and flags
// (its own; the root's, which every command has, only under the root).
// Hidden commands, hidden flags and
// cobra's help flag are left out, as --help leaves them out.
func CLIReference(root *cobra.Command) string {
	var b strings.Builder
	var walk func(c *cobra.Command, depth int)
	walk = func(c *cobra.Command, depth int) {
		writeCommand(&b, c, depth)
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() || (sub.HasAvailableSubCommands() && !sub.Hidden) {
				walk(sub, depth+1)
			}
		}
	}
	walk(root, 0)
	return b.String()
}

// writeCommand writes one command's section. The root is a level-2
// heading, its subcommands level 3, and deeper ones level 4: the page's
// table of contents then shows the command tree.
func writeCommand(b *strings.Builder, c *cobra.Command, depth int) {
	level := min(2+depth, 4)
	fmt.Fprintf(b, "%s %s\n\n", strings.Repeat("#", level), c.CommandPath())
	if c.Short != "" {
		fmt.Fprintf(b, "%s.\n\n", strings.TrimSuffix(c.Short, "."))
	}
	if long := strings.TrimSpace(c.Long); long != "" {
		fmt.Fprintf(b, "%s\n\n", long)
	}
	if c.Runnable() {
		fmt.Fprintf(b, "```\n%s\n```\n\n", c.UseLine())
	}
	if ex := strings.TrimRight(c.Example, " \n"); strings.TrimSpace(ex) != "" {
		fmt.Fprintf(b, "Examples:\n\n```sh\n%s\n```\n\n", dedent(ex))
	}
	// The root's persistent flags are every command's: they are listed
	// once, there, as "Flags of every command".
	if rows := flagRows(c.LocalNonPersistentFlags()); len(rows) > 0 {
		writeFlags(b, "Flags", rows)
	}
	if rows := flagRows(c.PersistentFlags()); len(rows) > 0 {
		title := "Flags of this command and the commands under it"
		if !c.HasParent() {
			title = "Flags of every command"
		}
		writeFlags(b, title, rows)
	}
	if subs := available(c); len(subs) > 0 {
		b.WriteString("Commands:\n\n")
		for _, sub := range subs {
			fmt.Fprintf(b, "- [`%s`](#%s): %s\n", sub.CommandPath(), anchor(sub.CommandPath()), sub.Short)
		}
		b.WriteString("\n")
	}
}

// available are c's subcommands that --help lists.
func available(c *cobra.Command) []*cobra.Command {
	var subs []*cobra.Command
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() || (sub.HasAvailableSubCommands() && !sub.Hidden) {
			subs = append(subs, sub)
		}
	}
	return subs
}

// anchor is the id mkdocs gives a heading of plain words: lower case,
// spaces to hyphens.
func anchor(heading string) string {
	return strings.ReplaceAll(strings.ToLower(heading), " ", "-")
}

// flagRows are the table rows of fs's visible flags, sorted by name.
func flagRows(fs *pflag.FlagSet) []string {
	var rows []string
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" {
			return
		}
		name := "`--" + f.Name + "`"
		if f.Shorthand != "" {
			name = "`-" + f.Shorthand + "`, " + name
		}
		typ := f.Value.Type()
		if typ == "bool" {
			typ = ""
		}
		def := ""
		switch f.DefValue {
		case "", "false", "[]", "0s", "0":
		default:
			def = "`" + f.DefValue + "`"
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s |", name, typ, def, cell(f.Usage)))
	})
	return rows
}

func writeFlags(b *strings.Builder, title string, rows []string) {
	fmt.Fprintf(b, "%s:\n\n| Flag | Value | Default | Meaning |\n|---|---|---|---|\n", title)
	for _, r := range rows {
		b.WriteString(r + "\n")
	}
	b.WriteString("\n")
}

// cell makes text safe inside a Markdown table cell.
func cell(text string) string {
	text = strings.ReplaceAll(text, "|", `\|`)
	return strings.ReplaceAll(text, "\n", " ")
}

// dedent removes the indentation that every non-empty line of text shares.
func dedent(text string) string {
	lines := strings.Split(text, "\n")
	common := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " \t"))
		if common < 0 || n < common {
			common = n
		}
	}
	for i, l := range lines {
		if len(l) >= common && common > 0 {
			lines[i] = l[common:]
		}
	}
	return strings.Join(lines, "\n")
}

// Splice returns page with the text between the markers begin and end
// replaced by generated. A page without both markers, in order, is an
// error that names them.
func Splice(page []byte, begin, end, generated string) ([]byte, error) {
	i := bytes.Index(page, []byte(begin))
	j := bytes.Index(page, []byte(end))
	if i < 0 || j < i {
		return nil, fmt.Errorf("splicing a generated section: no %q ... %q markers, or they are out of order", begin, end)
	}
	var out bytes.Buffer
	out.Write(page[:i+len(begin)])
	out.WriteString("\n\n" + strings.TrimRight(generated, "\n") + "\n\n")
	out.Write(page[j:])
	return out.Bytes(), nil
}

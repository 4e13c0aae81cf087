package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestEveryCommandHasExamples walks the command tree: every command's
// --help shows examples, and each example is a command line the CLI
// accepts (the command exists, its flags are known, its arguments fit).
func TestEveryCommandHasExamples(t *testing.T) {
	started := false
	root := newRootCmd(&globals{}, &started)
	walk(root, func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			return
		}
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s: no examples in its --help", c.CommandPath())
			return
		}
		n := 0
		for _, line := range exampleLines(c.Example) {
			n++
			args, err := splitWords(line)
			if err != nil {
				t.Errorf("%s: example %q: %v", c.CommandPath(), line, err)
				continue
			}
			if len(args) == 0 || args[0] != "tidemark" {
				t.Errorf("%s: example %q does not start with tidemark", c.CommandPath(), line)
				continue
			}
			found, rest, err := root.Find(args[1:])
			if err != nil {
				t.Errorf("%s: example %q: %v", c.CommandPath(), line, err)
				continue
			}
			if !isUnder(found, c) {
				t.Errorf("%s: example %q is of %s", c.CommandPath(), line, found.CommandPath())
				continue
			}
			found.InitDefaultHelpFlag()
			if err := found.ParseFlags(rest); err != nil {
				t.Errorf("%s: example %q: %v", c.CommandPath(), line, err)
				continue
			}
			if found.Runnable() {
				if err := found.ValidateArgs(found.Flags().Args()); err != nil {
					t.Errorf("%s: example %q: %v", c.CommandPath(), line, err)
				}
			}
		}
		if n == 0 {
			t.Errorf("%s: its examples hold no tidemark command line:\n%s", c.CommandPath(), c.Example)
		}
	})
	for path := range examples {
		if c, _, err := root.Find(strings.Fields(path)[1:]); err != nil || c.CommandPath() != path {
			t.Errorf("examples[%q]: no such command", path)
		}
	}
	if !strings.Contains(helpOf(t, root, "run"), "Examples:") {
		t.Errorf("tidemark run --help shows no Examples: section")
	}
}

func walk(c *cobra.Command, f func(*cobra.Command)) {
	f(c)
	for _, sub := range c.Commands() {
		walk(sub, f)
	}
}

// isUnder reports whether c is parent or below it.
func isUnder(c, parent *cobra.Command) bool {
	for ; c != nil; c = c.Parent() {
		if c == parent {
			return true
		}
	}
	return false
}

// exampleLines are the command lines of an Example: its lines that are
// not comments or output, joined where a line ends in a backslash.
func exampleLines(ex string) []string {
	var out []string
	cont := ""
	for _, l := range strings.Split(ex, "\n") {
		l = strings.TrimSpace(l)
		if cont != "" {
			l = cont + " " + l
			cont = ""
		}
		if strings.HasSuffix(l, `\`) {
			cont = strings.TrimSuffix(l, `\`)
			continue
		}
		if strings.HasPrefix(l, "tidemark") {
			out = append(out, l)
		}
	}
	return out
}

// splitWords splits a command line as a shell does for plain words and
// single or double quotes; a "#" word starts a comment.
func splitWords(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	quote := rune(0)
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case r == '#' && !inWord:
			return words, nil
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, errUnclosedQuote
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

var errUnclosedQuote = errors.New("unclosed quote")

// helpOf is the --help text of the command at path.
func helpOf(t *testing.T, root *cobra.Command, path ...string) string {
	t.Helper()
	c, _, err := root.Find(path)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	c.SetOut(&b)
	if err := c.Help(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

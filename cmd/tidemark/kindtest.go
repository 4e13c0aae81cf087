//go:build kindtest

package main

// Built with -tags kindtest, the CLI links the test-only source kind
// memsource, which e2e's TestTestKind drives: a kind is added by this one
// import and shows itself everywhere.
import _ "github.com/tidemark-etl/tidemark/internal/kindtest/memsource"

//go:build kindtest

package main

// Built with -tags kindtest, the CLI links the test-only kinds: the source
// kind memsource and the sink kind memsink, which e2e's TestTestKind
// drives: a kind is added by one import and shows itself everywhere.
import (
	_ "github.com/tidemark-etl/tidemark/internal/kindtest/memsink"
	_ "github.com/tidemark-etl/tidemark/internal/kindtest/memsource"
)

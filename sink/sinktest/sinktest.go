// Package sinktest is the test suite every sink kind passes. A kind's
// test calls Run with a Kind: how to make a fresh location of the kind,
// the job-file block of a sink there, and how to read back what is
// published and staged there. The suite drives the sink through the
// sink.Sink and sink.Location contracts as the runner does (claim,
// prepare, a real engine's write, stage, commit in a real state store,
// publish, purge, cleanup), once for each state store given.
//
//	func TestSuite(t *testing.T) {
//		sinktest.Run(t, sinktest.Kind{Engine: openDuckDB, New: newFolder}, sinktest.Stores(t, nil))
//	}
package sinktest

import (
	"testing"

	"github.com/tidemark-etl/tidemark/engine"
)

// Kind is what the suite needs of one sink kind.
type Kind struct {
	// Engine opens the engine that writes the staging areas (the suite
	// closes it): a real one, DuckDB where the kind has no other.
	Engine func(t *testing.T) engine.Engine
	// New makes a fresh, empty location of the kind.
	New func(t *testing.T) Place
	// Shared says several jobs may write to one location (a SQL table:
	// each job's rows carry its marker): another job's claim is refused
	// unless it is set.
	Shared bool
}

// Place is one location of the kind.
type Place struct {
	// Block is the job-file block of a sink ctx at the location, written
	// in the given mode (append or overwrite), starting "- ctx: CTX" and
	// indented as an item of sinks:. The sink writes the columns id and v.
	Block func(ctx, mode string) string
	// Rows reads back the rows published at the location, each as
	// "ID:V", in any order.
	Rows func(t *testing.T) []string
	// Staged lists what the location holds of the staging of runID
	// (staged files, incomplete uploads, staging tables): empty when
	// nothing is left.
	Staged func(t *testing.T, runID string) []string
	// Lose deletes what runID staged, as a lifecycle rule or an operator
	// would, so that it can no longer be published.
	Lose func(t *testing.T, runID string)
}

// Run runs the suite for k on each of stores.
func Run(t *testing.T, k Kind, stores []Store) {
	t.Helper()
	cases := []struct {
		name string
		fn   func(w *world)
	}{
		{"ClaimOwnership", testClaimOwnership},
		{"CheckOnlyWritesNothing", testCheckOnly},
		{"PublishRoundTrip", testPublishRoundTrip},
		{"PublishTwice", testPublishTwice},
		{"PurgeIdempotent", testPurgeIdempotent},
		{"CleanupDeadRunsOnly", testCleanupDeadOnly},
		{"LostOutput", testLostOutput},
		{"DiscardLeavesNothing", testDiscard},
		{"PublishedRemovesStaging", testPublishedRemovesStaging},
		{"AppenderMatchesMode", testAppender},
	}
	for _, s := range stores {
		t.Run(s.Name, func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					c.fn(newWorld(t, k, s))
				})
			}
		})
	}
}

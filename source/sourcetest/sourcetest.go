// Package sourcetest is the test suite every source kind passes. A kind's
// test calls Run with a Kind: how to make a fresh input of the kind, the
// job-file block of a source reading it, and how to add to it and change
// it. The suite drives the source through the source.Source and
// source.Plan contracts as the runner does (check, plan, open, a real
// engine's read, Done, Advance, commit in a real state store), once for
// each state store given, and checks what each run read against what the
// input holds: every row once, over the runs, whatever happened.
//
//	func TestSuite(t *testing.T) {
//		sourcetest.Run(t, sourcetest.Kind{Engine: openDuckDB, New: newFolder}, sinktest.Stores(t, nil))
//	}
package sourcetest

import (
	"testing"

	"github.com/tidemark-etl/tidemark/engine"
	"github.com/tidemark-etl/tidemark/sink/sinktest"
	"github.com/tidemark-etl/tidemark/store"
)

// Kind is what the suite needs of one source kind.
type Kind struct {
	// Engine opens the engine that reads the input (the suite closes it).
	Engine func(t *testing.T) engine.Engine
	// New makes a fresh, empty input of the kind.
	New func(t *testing.T) Input
	// NewIn, when set instead of New, makes it in the case's state store
	// (an Iceberg table in the store's own catalog).
	NewIn func(t *testing.T, st store.Store) Input
}

// Input is one input of the kind: a folder, a table.
type Input struct {
	// Block is the job-file block of a source ctx reading the input,
	// starting "- ctx: CTX" and indented as an item of sources:; the
	// source yields the columns id (a number) and v (a text). Changed is
	// the block of another definition of it (another format, table or
	// key), which a bookmark written for Block does not fit.
	Block, Changed func(ctx string) string
	// Add adds rows ("ID:V", ids above every earlier one) as new input:
	// a new file, new rows of a table.
	Add func(t *testing.T, rows ...string)
	// Modify changes the input the last Add made so that it holds rows
	// too (a file rewritten with them appended; rows inserted into a
	// table), as a writer would while a run reads it.
	Modify func(t *testing.T, rows ...string)
	// Remove deletes the input the last Add made (the file; its rows).
	Remove func(t *testing.T)
	// Snapshot describes the whole input (names, sizes, times, rows), to
	// tell that a plan changed nothing.
	Snapshot func(t *testing.T) string
}

// Run runs the suite for k on each of stores.
func Run(t *testing.T, k Kind, stores []sinktest.Store) {
	t.Helper()
	cases := []struct {
		name string
		fn   func(w *world)
	}{
		{"PlanChangesNothing", testPlanChangesNothing},
		{"AdvanceReadsOnlyNew", testAdvance},
		{"ChangedDuringRead", testChangedDuringRead},
		{"ChangedDuringLastAttempt", testChangedDuringLastAttempt},
		{"VanishedDuringRead", testVanishedDuringRead},
		{"Split", testSplit},
		{"CheckDefinition", testCheckDefinition},
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

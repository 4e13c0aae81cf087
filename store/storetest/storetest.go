// Package storetest is the test suite every state store backend passes.
// A backend's test calls Run with a function that opens a new, empty store:
//
//	func TestStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store {
//			s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "state.db"))
//			if err != nil {
//				t.Fatal(err)
//			}
//			t.Cleanup(func() { s.Close() })
//			return s
//		})
//	}
//
// A backend whose clock a test can set also calls RunClock.
//
// Times the suite writes have microsecond precision, which every backend
// keeps (PostgreSQL's timestamptz has no more). The 100k-file test is
// skipped with -short.
package storetest

import (
	"testing"

	"github.com/tidemark-etl/tidemark/store"
)

// Run runs the suite. open must return a new, empty store for each subtest
// and arrange its closing (t.Cleanup).
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"LeaseExclusive", testLeaseExclusive},
		{"LeaseExpiryTakeover", testLeaseExpiryTakeover},
		{"LeaseRenew", testLeaseRenew},
		{"LeaseRelease", testLeaseRelease},
		{"LeaseRace", testLeaseRace},
		{"LeaseBreak", testLeaseBreak},
		{"LeaseOnStoreClock", testLeaseOnStoreClock},
		{"CurrentLease", testCurrentLease},
		{"FencedWrites", testFencedWrites},
		{"FencedAfterRelease", testFencedAfterRelease},

		{"EmptyJob", testEmptyJob},
		{"CommitAdvances", testCommitAdvances},
		{"CommitStaleToken", testCommitStaleToken},
		{"CommitVersionConflict", testCommitVersionConflict},
		{"CommitRace", testCommitRace},
		{"CommitTwice", testCommitTwice},
		{"CommitNonAdvancing", testCommitNonAdvancing},
		{"SourceStatesFullSet", testSourceStatesFullSet},

		{"FilesByteOrder", testFilesByteOrder},
		{"FilesIdentity", testFilesIdentity},
		{"FilesEarlyBreak", testFilesEarlyBreak},
		{"FilesSuperseded", testFilesSuperseded},
		{"CommitRefusesPlannerBugs", testCommitRefusesPlannerBugs},
		{"RunInputs", testRunInputs},
		{"RunRanges", testRunRanges},
		{"TypedOutputs", testTypedOutputs},
		{"JobsIsolated", testJobsIsolated},

		{"RunsSeqAttempt", testRunsSeqAttempt},
		{"RunErrors", testRunErrors},
		{"RunJobFile", testRunJobFile},
		{"RunHost", testRunHost},
		{"RunsPaging", testRunsPaging},
		{"EachRun", testEachRun},
		{"OutputsAndActions", testOutputsAndActions},
		{"Unpublished", testUnpublished},
		{"PublishedOutputs", testPublishedOutputs},

		{"ResetToRun", testResetToRun},
		{"ResetErrors", testResetErrors},
		{"ResetToEmpty", testResetToEmpty},
		{"RewindCommitRewind", testRewindCommitRewind},
		{"Versions", testVersions},
		{"SourceStatesAt", testSourceStatesAt},

		{"Stats", testStats},
		{"LargeCommit", testLargeCommit},
	}
	tests = append(tests, catalogTests...)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, open(t))
		})
	}
	t.Run("Identity", func(t *testing.T) { testIdentity(t, open) })
}

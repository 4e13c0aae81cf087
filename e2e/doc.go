// Package e2e holds tidemark's end-to-end tests: they build the real
// tidemark binary once, drive it on temporary folders the way a user's
// scripts would (exit codes, --json output, files on disk), and check the
// data by reading the sinks back with DuckDB rather than by trusting the run
// summary. The contract they encode is the one in DESIGN.md.
package e2e

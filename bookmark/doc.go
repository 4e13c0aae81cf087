// Package bookmark is tidemark's pure state model: file identities, tracking
// modes, run modes and the rules that decide which input a run reads. It does
// no I/O; the planner feeds it listings and recorded state and gets decisions
// back.
package bookmark

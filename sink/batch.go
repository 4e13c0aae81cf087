package sink

// Appender is a Sink that says whether a run's output only adds to what
// the sink holds. A run over a large backlog is read, committed and
// published in batches, each its own run, only when every sink appends:
// an overwrite would have each batch replace the one before it. A Sink
// that is not an Appender makes the run one batch.
type Appender interface {
	// Appends reports whether the sink's mode adds a run's output to what
	// is there without replacing anything (append).
	Appends() bool
}

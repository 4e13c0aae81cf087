package source

// Splitter is a Plan that a run may read in batches: a run over a large
// backlog executes, commits and publishes one batch at a time, so that a
// crash late in it keeps the batches already committed. A Plan that is not
// a Splitter is read in one batch.
type Splitter interface {
	Plan
	// Split cuts the plan after its first n files (n ≥ 1), in the order the
	// plan reads them (the order its bounds take them: oldest first, or key
	// order for ordered listing). head reads those files and carries what
	// the plan's listing counted (unchanged, deferred, ...), so the counts
	// of all the batches add up to the plan's; rest reads the others (none
	// when n ≥ Pending: rest's Pending is 0 and it commits nothing new).
	//
	// rest's base state is what head's Advance returned, once the run
	// called it (its commit then moved the bookmark); until then it is the
	// plan's base. So committing head and then rest commits what the whole
	// plan would have, and rest reads with what head settled (the schema
	// it inferred). The receiver is not used after Split. It changes
	// nothing and cannot fail.
	Split(n int) (head, rest Plan)
}

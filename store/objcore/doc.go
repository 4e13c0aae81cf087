// Package objcore is the state store (store.Store, catalog.Store,
// store.Importer) written once over a Backend of storage and
// compare-and-swap alone: objects read and written whole under a key,
// conditional writes (create only, replace only the version read), a
// listing in key order, and a clock. store/s3 is it over an S3 bucket,
// store/memory over a map in memory (MemBackend); the rules, the object
// layout and its formats are this package's, the same on every backend.
//
// # Objects
//
// Under the backend's root:
//
//	tidemark-state.json                  identity: a random id, made once (If-None-Match: *)
//	jobs/JOB/head.json                   the job's head: lease, fencing token, head version, run seq (mutable, If-Match)
//	jobs/JOB/versions/VER-NONCE.json     a bookmark version: states, live segments, previous version (immutable)
//	jobs/JOB/segments/NONCE.seg          sorted file records of one source ctx, zstd (immutable)
//	jobs/JOB/commits/RUN-NONCE.json      a commit's final run record with outputs, actions, ranges (immutable)
//	jobs/JOB/runs/RUN.json               a run record (created If-None-Match: *, replaced If-Match)
//	jobs/JOB/seqs/SEQ-RUN                the run index, empty objects, SEQ inverted: listing is newest first
//
// JOB and RUN are path-escaped; VER and SEQ are written so that byte
// order is descending.
//
// The versions of a job are the chain from the head's version through
// Prev, numbered 1 to the head's without a gap (each one's Prev is the
// head it replaced). A version is read by its number: the listing of
// versions/VER- finds it, or, where an unreachable version of a lost swap
// or a failed import shares the number, the Prev of the version above
// decides; so reading one version, or a page of them, costs a few
// requests however long the history.
//
// # What is conditional
//
// Everything that changes about a job is in its head object, replaced only
// with If-Match: its ETag (created with If-None-Match: *). The lease, its
// fencing token and the bookmark's head version live in that one object,
// so a single compare-and-swap checks the token and the base version and
// moves the head: of two racing commits exactly one wins, and a holder
// whose lease was taken cannot commit, because the taker's swap changed
// the ETag. Every head write carries a random Op, so its bytes (S3's ETag
// is their MD5) differ from every earlier head's, and a writer whose
// answer was lost reads the head back and finds its Op (or its version's
// key) exactly when the write applied: on a 412, a 409, a 503 the SDK
// retried into a 412, or a dropped connection, the store finds out what
// happened instead of guessing.
//
// Versions, segments and commit objects are immutable, created with
// If-None-Match: * under random names before the swap that makes them
// reachable. Nothing is visible until the head points at it (through its
// version, or the commit recorded as pending in it), so a writer that
// loses a swap or crashes leaves only unreachable objects behind. Run
// records are created once (If-None-Match: *) and replaced with If-Match;
// a change a swap decided (a commit's final record, a rewind's undone
// runs) is recorded in the head as pending, written to the records right
// after, and written again by the next head write if a crash came first;
// readers apply what is pending.
//
// Fenced writes (BeginRun, FailRun, Commit, Reset) are head swaps and so
// are checked against the current token atomically. MarkPublished and
// MarkPurged check the token on the head just before they replace the run
// record: a holder that loses its lease in between can still land that
// one idempotent fact about its own outputs.
//
// # The lease rule
//
// Lease expiry is judged by the backend's clock, never the host's (S3's:
// the server's, bounded from the Date headers of its answers; see
// store/s3). A lease expires at Expires (the store's clock at acquisition
// or renewal plus the TTL); another host takes it only once the backend
// says its clock is surely past Expires (Backend.Expired). A holder renews
// well before its TTL, and the fencing token, not the clock, is what keeps
// a late holder from publishing.
//
// # Exact tracking's file set
//
// The processed-file set of a source ctx is log-structured: each commit
// writes one small sorted segment of the records it added, and tombstones
// of those it superseded; the version lists the ctx's live segments
// newest first, and the file set is their merge, the newest record of a
// path winning. When the newest segment holds at least half as many
// records as the next, or there are more than 8, the commit merges them
// into one bigger segment (dropping tombstones when it reaches the
// oldest), so a ctx has O(log n) segments and a run reads a bounded number
// of objects however many files were processed. Files streams the merge
// with one record per segment in memory. A rewind writes a version that
// lists the target version's segments: since segments never change, that
// is exactly the target's file set. A run's own segments are its input
// manifest (RunInputs). A commit that adds or supersedes records of a ctx
// first streams the ctx's live segments up to the last path it touches,
// to refuse what a database's constraints refuse (store.CheckFileRecords):
// superseding a path with no current record, adding one that has one.
//
// # Import
//
// ImportJob (tidemark state copy) writes a job's history as immutable
// objects and run records first and the job's head last: readers take
// only the runs up to the head's Seq, so an import that fails part way is
// invisible, and the job is still free for one that succeeds.
//
// # Catalog
//
// The catalog (catalog.Store) is one root object, catalog/root.json,
// swapped with If-Match; see catalog.go for how a commit's catalog changes
// become visible exactly when the commit's head swap makes the commit.
package objcore

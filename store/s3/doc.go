// Package s3 is a state store in an S3 bucket: state: s3://bucket/prefix/
// (options in the query string, e.g. ?region=eu-west-1&endpoint=https://...;
// credentials from the AWS chain, never the location), on AWS S3 and
// S3-compatible services that honour conditional writes, with no other
// service. The client is objstore/s3's (the AWS chain, endpoints, retries).
//
// # Objects
//
// Under the prefix:
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
// Lease expiry is judged by the S3 server's clock, never the host's: the
// store bounds the server's clock from the Date header of every answer (an
// answer stamped D to a request sent at local a, answered at b, puts the
// server's clock in [D, D+1s) at a moment between a and b) and keeps the
// intersection, measured with the host's monotonic clock only, so a host
// whose clock is set wrong bounds the server's clock as well as any other.
// A lease expires at Expires (the server's clock at acquisition or
// renewal, estimated, plus the TTL). Another host takes it only once the
// earliest the server's clock can read is past Expires; while the bounds
// straddle Expires it asks the server again until they do not. Store.Now
// is the middle of the bounds, never going back; so a lease can be taken
// up to half the bounds' width (under a second, and a round trip once
// narrowed) before a full TTL has passed on the server since it was
// written: a holder renews well before its TTL, and the fencing token,
// not the clock, is what keeps a late holder from publishing.
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
// manifest (RunInputs).
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
//
// # Probe
//
// Open (unless read-only) writes the identity object's own bytes back to
// it with If-None-Match: * and with If-Match of a wrong ETag: both must
// fail with 412. A service that accepts either write ignores conditional
// writes (and rewrote the identity unchanged), and the store refuses to
// open, naming s3://bucket/prefix/.
package s3

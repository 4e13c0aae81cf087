// Package s3 is a state store in an S3 bucket: state: s3://bucket/prefix/
// (options in the query string, e.g. ?region=eu-west-1&endpoint=https://...;
// credentials from the AWS chain, never the location), on AWS S3 and
// S3-compatible services that honour conditional writes, with no other
// service. The client is objstore/s3's (the AWS chain, endpoints, retries).
//
// The store is store/objcore over this package's backend: the objects
// under the prefix, their formats and every rule are objcore's (see its
// documentation). This package is the S3 side of objcore.Backend: the
// SDK's calls (If-None-Match: * and If-Match on PutObject), S3's answers
// mapped (412, and the 409 S3 gives conditional writes racing on one key,
// are objcore.ErrPrecondition; 404 is objcore.ErrMissing), and the clock.
//
// # The clock
//
// Lease expiry is judged by the S3 server's clock, never the host's: the
// backend bounds the server's clock from the Date header of every answer
// (an answer stamped D to a request sent at local a, answered at b, puts
// the server's clock in [D, D+1s) at a moment between a and b) and keeps
// the intersection, measured with the host's monotonic clock only, so a
// host whose clock is set wrong bounds the server's clock as well as any
// other. Another host takes a lease only once the earliest the server's
// clock can read is past its Expires; while the bounds straddle Expires it
// asks the server again until they do not. Now is the middle of the
// bounds, never going back; so a lease can be taken up to half the bounds'
// width (under a second, and a round trip once narrowed) before a full TTL
// has passed on the server since it was written.
//
// # Probe
//
// Open (unless read-only) writes the identity object's own bytes back to
// it with If-None-Match: * and with If-Match of a wrong ETag: both must
// fail with 412. A service that accepts either write ignores conditional
// writes (and rewrote the identity unchanged), and the store refuses to
// open, naming s3://bucket/prefix/.
package s3

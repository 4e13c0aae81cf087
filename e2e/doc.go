// Package e2e holds tidemark's end-to-end tests: they build the real
// tidemark binary once, drive it the way a user's scripts would (exit
// codes, --json output, files and objects), and check the data by reading
// the sinks back with DuckDB rather than by trusting the run summary. The
// contract they encode is the one in DESIGN.md.
//
// The scenarios of the core run on two backends (eachBackend): local
// folders, and s3:// inputs and outputs on a real S3 server, versitygw,
// started once for the package on first use (scripts/test.sh installs it;
// without it the S3 tests fail). A fixture's places (backend_test.go) put,
// change and read objects through the plain AWS SDK, and read a sink back
// by downloading what ListObjectsV2 shows. S3-only scenarios (faults
// through a fault-injecting proxy, ordered listing over 100,000 objects,
// two S3 services in one job, stale multipart uploads) are in s3*_test.go.
package e2e

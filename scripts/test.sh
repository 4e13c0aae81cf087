#!/usr/bin/env bash
# scripts/test.sh — tidemark's test command (the README's "run the tests"),
# also what CI runs through .ci/run.
#
# Needs Go and a C compiler: the embedded DuckDB engine is cgo. Arguments are
# passed to `go test`, e.g. scripts/test.sh -run TestThreeDays -v.
#
# Layout: checks of the machine, then a setup section that starts the
# servers integration tests need (each registered for the exit trap), then
# vet and the tests. Nothing is hidden: go test prints its usual output.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

export CGO_ENABLED=1
TEST_TIMEOUT="${TEST_TIMEOUT:-20m}"

log() { printf '==> %s\n' "$*" >&2; }

# --- machine ---------------------------------------------------------------
command -v go >/dev/null || { echo "scripts/test.sh: go is not on PATH" >&2; exit 1; }
cc="${CC:-gcc}"
command -v "$cc" >/dev/null || {
	echo "scripts/test.sh: no C compiler ($cc); DuckDB (cgo) needs one: apt-get install gcc" >&2
	exit 1
}
log "$(go version), $("$cc" --version | head -n1)"

# --- setup: servers for integration tests ----------------------------------
# Each server started here appends its pid to SERVER_PIDS and its scratch
# folder to SCRATCH; the trap stops and removes them however the script ends.
# (S3 via versitygw, PostgreSQL, MariaDB and Spark Connect come with later
# issues; they export the variables their tests look for, e.g.
# TIDEMARK_TEST_S3_ENDPOINT, and tests skip what is not configured.)
SERVER_PIDS=()
SCRATCH=()
cleanup() {
	local pid
	for pid in "${SERVER_PIDS[@]:-}"; do
		[ -n "$pid" ] || continue
		kill "$pid" 2>/dev/null || true
	done
	for pid in "${SERVER_PIDS[@]:-}"; do
		[ -n "$pid" ] || continue
		wait "$pid" 2>/dev/null || true
	done
	local dir
	for dir in "${SCRATCH[@]:-}"; do
		[ -n "$dir" ] && rm -rf "$dir"
	done
	return 0
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- setup: S3 (versitygw) -------------------------------------------------
# S3 tests start their own versitygw on free loopback ports (through
# internal/s3test), so this only installs the binary; without it those tests
# fail rather than skip. Installed into GOBIN/GOPATH/bin, never the repo.
VERSITYGW_VERSION=v1.8.0
gobin="$(go env GOBIN)"
[ -n "$gobin" ] || gobin="$(go env GOPATH | cut -d: -f1)/bin"
export PATH="$gobin:$PATH"
if ! command -v versitygw >/dev/null; then
	log "installing versitygw $VERSITYGW_VERSION into $gobin"
	go install "github.com/versity/versitygw/cmd/versitygw@$VERSITYGW_VERSION"
fi
log "versitygw: $(command -v versitygw)"

# --- vet and test ----------------------------------------------------------
log "go vet ./..."
go vet ./...

log "go test ./... -count=1 -timeout $TEST_TIMEOUT $*"
go test ./... -count=1 -timeout "$TEST_TIMEOUT" "$@"

#!/usr/bin/env bash
# quickstart.sh — three days of sales arrivals through tidemark's job bookmarks.
#
# Monday 10 files land and the first run reads all of them; Tuesday 5 more land
# and the run reads only those; Wednesday nothing new lands and the run has
# nothing to do. Then the run history, the bookmark and the output read back.
#
# Works from any folder: bash examples/sales/quickstart.sh
# Needs Go and a C compiler (the embedded DuckDB engine is cgo). Uses the
# tidemark on PATH when there is one, else builds this checkout's.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="$here/bin"

if [ -t 2 ]; then bold=$'\033[1m' plain=$'\033[0m'; else bold='' plain=''; fi
step() { printf '\n%s==> %s%s\n' "$bold" "$*" "$plain" >&2; }
show() { printf '$ %s\n' "$*" >&2; "$@"; }

# build NAME PACKAGE compiles PACKAGE into examples/sales/bin/NAME, saying
# every 20 seconds that it still compiles (a first build compiles DuckDB's
# C++ bindings, which takes minutes and prints nothing meanwhile).
build() {
	local name="$1" pkg="$2" pid waited=0 rc=0
	(cd "$root" && CGO_ENABLED=1 go build -o "$bin/$name" "$pkg") &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		sleep 1
		waited=$((waited + 1))
		if [ $((waited % 20)) -eq 0 ] && kill -0 "$pid" 2>/dev/null; then
			printf '    still compiling %s ... %d s\n' "$name" "$waited" >&2
		fi
	done
	wait "$pid" || rc=$?
	return "$rc"
}

mkdir -p "$bin"
# An installed tidemark (go install, a wheel, a release archive) is used as
# it is; TIDEMARK_QUICKSTART_BUILD=1 builds this checkout's instead.
if [ "${TIDEMARK_QUICKSTART_BUILD:-}" != 1 ] && installed="$(command -v tidemark)"; then
	step "using the installed tidemark: $installed ($("$installed" version 2>/dev/null | head -n1); TIDEMARK_QUICKSTART_BUILD=1 builds this checkout's instead)"
	ln -sf "$installed" "$bin/tidemark"
else
	step "building tidemark into examples/sales/bin/ (the first build compiles DuckDB's C++ bindings: a few minutes; later builds take seconds)"
	rm -f "$bin/tidemark"
	build tidemark ./cmd/tidemark
fi
step "building countrows into examples/sales/bin/ (it reads the output back with DuckDB)"
build countrows ./examples/sales/countrows
export PATH="$bin:$PATH"

cd "$here"
step "a clean demo folder: landing/, output/ and .tidemark/ removed"
rm -rf landing output .tidemark
mkdir -p landing

step "Monday: 10 files arrive"
cp arrivals/monday/*.csv landing/
show tidemark run job.yaml

step "Tuesday: 5 more files arrive; only they are read"
cp arrivals/tuesday/*.csv landing/
show tidemark run job.yaml

step "Wednesday: nothing new arrives; nothing to do"
show tidemark run job.yaml

step "run history"
show tidemark runs sales-daily

step "the bookmark"
show tidemark bookmark show sales-daily

step "the output read back with DuckDB (skipping _tidemark/)"
show countrows output
input_rows=$(cat arrivals/monday/*.csv arrivals/tuesday/*.csv | grep -vc '^order_id,')
echo "input: $input_rows rows in $(ls arrivals/monday arrivals/tuesday | grep -c '\.csv$') files"
echo
echo "to look at the job in the dashboard: examples/sales/bin/tidemark serve --state examples/sales/.tidemark/state.db  (then open http://127.0.0.1:8484/)"

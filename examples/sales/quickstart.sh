#!/usr/bin/env bash
# quickstart.sh — three days of sales arrivals through tidemark's job bookmarks.
#
# Monday 10 files land and the first run reads all of them; Tuesday 5 more land
# and the run reads only those; Wednesday nothing new lands and the run has
# nothing to do. Then the run history, the bookmark and the output read back.
#
# Works from any folder: bash examples/sales/quickstart.sh
# Needs Go and a C compiler (the embedded DuckDB engine is cgo).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="$here/bin"

if [ -t 2 ]; then bold=$'\033[1m' plain=$'\033[0m'; else bold='' plain=''; fi
step() { printf '\n%s==> %s%s\n' "$bold" "$*" "$plain" >&2; }
show() { printf '$ %s\n' "$*" >&2; "$@"; }

step "building tidemark into examples/sales/bin/"
(cd "$root" && CGO_ENABLED=1 go build -o "$bin/tidemark" ./cmd/tidemark)
(cd "$root" && CGO_ENABLED=1 go build -o "$bin/countrows" ./examples/sales/countrows)
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

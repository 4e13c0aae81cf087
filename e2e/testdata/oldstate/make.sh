#!/usr/bin/env bash
# make.sh — makes the old-state fixture of e2e/oldstate_test.go with the
# tidemark binary of the release before typed manifests (issue 8):
#
#   git worktree add /tmp/tm-old-src 68ea0e7 && (cd /tmp/tm-old-src && go build -o /tmp/tm-old ./cmd/tidemark)
#   e2e/testdata/oldstate/make.sh /tmp/tm-old
#
# It works in /tmp/tidemark-oldstate (a fixed folder: the SQLite source's
# path and the CSV source's folder are part of the recorded fingerprints,
# so the test replays the state in the same folder), against a throwaway
# versitygw whose endpoint is given through AWS_ENDPOINT_URL (not recorded
# in the state). It writes here: state.db, landing/ and source.db (the
# inputs as they were), s3/ (the objects of bucket tm-oldstate, which the
# test uploads to a fresh versitygw) and golden/ (bookmark show --json and
# runs --json of both jobs, printed by the old binary).
#
# Job orders: three enable runs over CSV files into an S3 Parquet sink,
# then a rewind to the second run with --purge-output (the third file is
# unread again). Job orders_db (same state file): two enable runs of a
# SQLite table source, each recording a key range and the table state.
set -euo pipefail
tm=${1:?usage: make.sh TIDEMARK_BINARY}
tm=$(realpath "$tm")
here=$(cd "$(dirname "$0")" && pwd)
work=/tmp/tidemark-oldstate
s3dir=$(mktemp -d)
rm -rf "$work"
mkdir -p "$work/landing" "$s3dir/tm-oldstate"
cp "$here/orders.yaml" "$here/db.yaml" "$work/"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
key=tmold$RANDOM
secret=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
ROOT_ACCESS_KEY=$key ROOT_SECRET_KEY=$secret versitygw --port "127.0.0.1:$port" --quiet posix "$s3dir" &
vgw=$!
trap 'kill $vgw 2>/dev/null || true; rm -rf "$s3dir"' EXIT
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done

export AWS_ACCESS_KEY_ID=$key AWS_SECRET_ACCESS_KEY=$secret AWS_REGION=us-east-1
export AWS_ENDPOINT_URL=http://127.0.0.1:$port AWS_EC2_METADATA_DISABLED=true
export AWS_CONFIG_FILE=/nonexistent AWS_SHARED_CREDENTIALS_FILE=/nonexistent

# csv NAME FIRST N MTIME: N orders from FIRST, as the e2e generator makes them.
csv() {
	python3 - "$work/landing/$1" "$2" "$3" <<'PY'
import sys
path, first, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
products = ["widget", "gadget", "gizmo", "sprocket", "doohickey"]
with open(path, "w") as f:
    f.write("order_id,customer_id,product,amount\n")
    for i in range(first, first + n):
        f.write(f"{i},C{1 + (i*31) % 997:04d},{products[(i*7) % 5]},{5 + (i*13) % 496}\n")
PY
	touch -d "$4" "$work/landing/$1"
}
run() { "$tm" run "$work/$1" --json >/dev/null; }
lastrun() { "$tm" runs "$work/$1" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["run_id"])'; }

csv a1.csv 1000 20 "2025-01-01 10:00:00 UTC"
csv a2.csv 1020 15 "2025-01-01 11:00:00 UTC"
run orders.yaml; sleep 1.1
csv b1.csv 1035 25 "2025-01-02 10:00:00 UTC"
run orders.yaml; r2=$(lastrun orders.yaml); sleep 1.1
csv c1.csv 1060 10 "2025-01-03 10:00:00 UTC"
run orders.yaml; sleep 1.1
"$tm" bookmark reset "$work/orders.yaml" --to-run "$r2" --purge-output >/dev/null

sqlite3 "$work/source.db" "CREATE TABLE orders (id INTEGER PRIMARY KEY, v TEXT NOT NULL, amount INTEGER NOT NULL);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 20) INSERT INTO orders SELECT i, 'v'||i, i*10 FROM n;"
run db.yaml; sleep 1.1
sqlite3 "$work/source.db" "WITH RECURSIVE n(i) AS (SELECT 21 UNION ALL SELECT i+1 FROM n WHERE i < 35) INSERT INTO orders SELECT i, 'v'||i, i*10 FROM n;"
run db.yaml

rm -rf "$here/landing" "$here/s3" "$here/golden" "$here/state.db" "$here/source.db"
mkdir -p "$here/golden" "$here/s3"
cp -p -r "$work/landing" "$here/landing"
cp "$work/source.db" "$here/source.db"
sqlite3 "$work/.tidemark/state.db" "PRAGMA wal_checkpoint(TRUNCATE);" >/dev/null
cp "$work/.tidemark/state.db" "$here/state.db"
(cd "$s3dir" && find tm-oldstate -type f -not -path '*/.sgwtmp/*' | while read -r f; do
	mkdir -p "$here/s3/$(dirname "$f")"; cp "$f" "$here/s3/$f"; done)
for j in orders db; do
	"$tm" bookmark show "$work/$j.yaml" --json >"$here/golden/$j.bookmark.json"
	"$tm" runs "$work/$j.yaml" --json >"$here/golden/$j.runs.json"
done
echo "fixture written to $here"

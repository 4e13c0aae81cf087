#!/usr/bin/env bash
# run.sh — the article's AWS Glue script (etl.py, verbatim) over three days of
# sales files, with tidemark's job bookmarks: one command.
#
# Monday 10 files land and the run reads all of them; Tuesday 5 more land and
# the run reads only those; Wednesday nothing new lands and the run reads
# nothing (and starts no Spark). Each day: the crawler registers landing/ as
# sales_db.orders_raw, then `tidemark glue run etl.py` runs the script, whose
# summary says what it read. Then the run history and the bookmark.
#
# Works from any folder: bash examples/glue/run.sh
#
# What it needs, and what it does when something is missing:
#   tidemark   $TIDEMARK_BIN, else `tidemark` on PATH, else built from this
#              repository into bin/ (Go and a C compiler; a few minutes the
#              first time).
#   pyspark    $TIDEMARK_PYTHON if that Python has pyspark, else the venv
#              .venv/ here, made with `python3 -m venv` and
#              `pip install 'pyspark==4.0.*'` when it lacks pyspark (about
#              400 MB, once). Classic Spark also needs Java 17 or 21.
#   S3         etl.py writes s3://your-output-bucket/sales/. With
#              AWS_ENDPOINT_URL (or AWS_ENDPOINT_URL_S3) set, that S3 is used
#              and the bucket must exist; otherwise a local S3 (versitygw,
#              on PATH, else installed with `go install`) serves .s3/ on a
#              loopback port for the three runs, and the output is the
#              Parquet files under .s3/your-output-bucket/sales/.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
arrivals="$root/examples/sales/arrivals"
versitygw_version=v1.8.0 # as scripts/test.sh installs it

if [ -t 2 ]; then bold=$'\033[1m' plain=$'\033[0m'; else bold='' plain=''; fi
step() { printf '\n%s==> %s%s\n' "$bold" "$*" "$plain" >&2; }
show() { printf '$ %s\n' "$*" >&2; "$@"; }
die() { printf 'run.sh: %s\n' "$*" >&2; exit 2; }

# --- tidemark ---------------------------------------------------------------
tidemark="${TIDEMARK_BIN:-}"
if [ -z "$tidemark" ] && command -v tidemark >/dev/null; then
	tidemark="$(command -v tidemark)"
fi
if [ -z "$tidemark" ]; then
	command -v go >/dev/null || die "no tidemark on PATH and no Go to build it: install Go (https://go.dev/dl/) or set TIDEMARK_BIN"
	step "building tidemark into examples/glue/bin/ (the first build compiles DuckDB: a few minutes)"
	(cd "$root" && CGO_ENABLED=1 go build -o "$here/bin/tidemark" ./cmd/tidemark)
	tidemark="$here/bin/tidemark"
fi

# --- pyspark ----------------------------------------------------------------
has_pyspark() { "$1" -c 'import pyspark' >/dev/null 2>&1; }
python="${TIDEMARK_PYTHON:-}"
if [ -n "$python" ] && ! has_pyspark "$python"; then
	printf 'run.sh: %s has no pyspark; using the venv %s/.venv\n' "$python" "$here" >&2
	python=""
fi
if [ -z "$python" ]; then
	python="$here/.venv/bin/python"
	if ! has_pyspark "$python"; then
		command -v python3 >/dev/null || die "no python3 to make the pyspark venv with: install Python 3.10 or newer (apt-get install python3-venv)"
		step "setting up pyspark in examples/glue/.venv (pip install 'pyspark==4.0.*', once)"
		python3 -m venv "$here/.venv" || die "python3 -m venv failed: install the venv module (apt-get install python3-venv)"
		"$python" -m pip install --quiet --disable-pip-version-check 'pyspark==4.0.*'
	fi
fi
export TIDEMARK_PYTHON="$python"
if [ -z "${SPARK_REMOTE:-}" ] && ! command -v java >/dev/null && [ -z "${JAVA_HOME:-}" ]; then
	die "classic Spark needs Java 17 or 21 (apt-get install openjdk-17-jre-headless), or set SPARK_REMOTE to a Spark Connect server"
fi

# --- S3 for the output bucket -----------------------------------------------
cd "$here"
if [ -z "${AWS_ENDPOINT_URL:-}${AWS_ENDPOINT_URL_S3:-}" ]; then
	gw="$(command -v versitygw || true)"
	if [ -z "$gw" ]; then
		command -v go >/dev/null || die "no S3 configured (AWS_ENDPOINT_URL) and no versitygw or Go to install it"
		step "installing versitygw $versitygw_version, a local S3 (go install)"
		go install "github.com/versity/versitygw/cmd/versitygw@$versitygw_version"
		gw="$(go env GOPATH)/bin/versitygw"
	fi
	rm -rf .s3
	mkdir -p .s3/your-output-bucket
	port=$("$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	export AWS_ACCESS_KEY_ID=tidemark-example AWS_SECRET_ACCESS_KEY=tidemark-example-secret AWS_REGION=us-east-1
	export AWS_ENDPOINT_URL="http://127.0.0.1:$port" AWS_EC2_METADATA_DISABLED=true
	export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null
	step "a local S3 (versitygw) on 127.0.0.1:$port serving examples/glue/.s3/"
	ROOT_ACCESS_KEY="$AWS_ACCESS_KEY_ID" ROOT_SECRET_KEY="$AWS_SECRET_ACCESS_KEY" \
		"$gw" --port "127.0.0.1:$port" --quiet posix "$here/.s3" >.s3.log 2>&1 &
	gw_pid=$!
	trap 'kill "$gw_pid" 2>/dev/null || true' EXIT
	for _ in $(seq 100); do
		"$python" -c 'import sys, urllib.request as u
try: u.urlopen(sys.argv[1])
except u.HTTPError: pass' "$AWS_ENDPOINT_URL" 2>/dev/null && break
		kill -0 "$gw_pid" 2>/dev/null || die "versitygw exited: $(cat .s3.log)"
		sleep 0.1
	done
fi

# --- the three days ---------------------------------------------------------
step "a clean start: landing/ and .tidemark/ (the state) removed"
rm -rf landing .tidemark
mkdir -p landing

day() {
	step "$1"
	show "$tidemark" crawl sales-crawler.yaml
	show "$tidemark" glue run etl.py --JOB_NAME sales-etl --job-bookmark-option job-bookmark-enable
}
cp "$arrivals"/monday/*.csv landing/
day "Monday: 10 files land; the run reads all of them"
cp "$arrivals"/tuesday/*.csv landing/
day "Tuesday: 5 more files land; the run reads only those"
day "Wednesday: nothing new lands; the run reads nothing (no Spark started)"

step "run history"
show "$tidemark" runs sales-etl --state .tidemark/state.db
step "the bookmark"
show "$tidemark" bookmark show sales-etl --state .tidemark/state.db
if [ -d .s3/your-output-bucket/sales ]; then
	echo "output: $(find .s3/your-output-bucket/sales -name '*.parquet' -not -path '*/_tidemark/*' | wc -l) Parquet files in examples/glue/.s3/your-output-bucket/sales/"
fi

#!/usr/bin/env bash
# scripts/test.sh — tidemark's test command (the README's "run the tests"),
# also what CI runs through .ci/run.
#
# Needs Go and a C compiler: the embedded DuckDB engine is cgo. Arguments are
# passed to `go test`, e.g. scripts/test.sh -run TestThreeDays -v.
#
# Layout: checks of the machine, then a setup section that starts the
# servers integration tests need (each registered for the exit trap), then
# vet, staticcheck and the tests. Nothing is hidden: go test prints its
# usual output.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

export CGO_ENABLED=1
TEST_TIMEOUT="${TEST_TIMEOUT:-60m}"

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
# Tests that need a server and find none fail, saying to run this script;
# only TIDEMARK_SKIP_S3=1 / TIDEMARK_SKIP_SQL=1 / TIDEMARK_SKIP_BROWSER=1 / TIDEMARK_SKIP_SPARK=1 (never set in CI) skip them.
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

# --- setup: staticcheck ----------------------------------------------------
# Pinned as versitygw is, installed the same way; run after go vet below.
STATICCHECK_VERSION=v0.8.2
if ! staticcheck -version 2>/dev/null | grep -qF "(${STATICCHECK_VERSION#v})"; then
	log "installing staticcheck $STATICCHECK_VERSION into $gobin"
	go install "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION"
fi

# --- setup: PostgreSQL and MariaDB (SQL table sources and sinks) -----------
# One throwaway PostgreSQL and one MariaDB for the whole run, on free
# loopback ports, data in scratch folders, fsync off. Tests create a
# database each (internal/sqltest) and find the servers through
#   TIDEMARK_TEST_PG    postgres://postgres:PASSWORD@127.0.0.1:PORT/postgres
#   TIDEMARK_TEST_MYSQL mysql://tidemark:PASSWORD@127.0.0.1:PORT/
# The password is in the URL for the tests' convenience; the tests pass it
# to tidemark through password_env, as a job would. Already set variables
# (a developer's own servers) are used as they are. Packages come from
# Debian when missing; with them installed this block takes a few seconds.
# SQL tests fail without these servers unless TIDEMARK_SKIP_SQL=1.
SQL_PASSWORD="tidemark-test-pw"

free_port() {
	local p
	for _ in $(seq 1 50); do
		p=$((20000 + RANDOM % 40000))
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return 0; }
	done
	echo "scripts/test.sh: no free loopback port found" >&2
	return 1
}

apt_install() {
	if [ -z "${APT_UPDATED:-}" ]; then
		apt-get update -qq
		APT_UPDATED=1
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

pg_bin() { { ls -d /usr/lib/postgresql/*/bin 2>/dev/null || true; } | sort -V | tail -n1; }

start_postgres() {
	local bin dir port
	bin="$(pg_bin)"
	if [ -z "$bin" ] || [ ! -x "$bin/postgres" ]; then
		log "installing PostgreSQL (Debian packages)"
		apt_install postgresql postgresql-client
		bin="$(pg_bin)"
	fi
	dir="$(mktemp -d /tmp/tidemark-pg.XXXXXX)"
	SCRATCH+=("$dir")
	chmod 755 "$dir"
	local as=()
	if [ "$(id -u)" = 0 ]; then
		chown postgres: "$dir" # postgres refuses to run as root
		as=(runuser -u postgres --)
	fi
	printf '%s\n' "$SQL_PASSWORD" >"$dir/pw"
	"${as[@]}" "$bin/initdb" -D "$dir/data" -U postgres --pwfile="$dir/pw" -E UTF8 --locale=C.UTF-8 \
		--auth-local=trust --auth-host=scram-sha-256 --no-sync >"$dir/initdb.log" 2>&1 ||
		{ cat "$dir/initdb.log" >&2; return 1; }
	for _ in 1 2 3; do
		port="$(free_port)"
		"${as[@]}" "$bin/postgres" -D "$dir/data" -k "$dir" -h 127.0.0.1 -p "$port" \
			-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300 \
			-c shared_buffers=256MB -c max_wal_size=4GB \
			-c wal_level=logical -c max_replication_slots=30 -c max_wal_senders=30 >"$dir/server.log" 2>&1 &
		SERVER_PIDS+=($!)
		for _ in $(seq 1 100); do
			"$bin/pg_isready" -q -h 127.0.0.1 -p "$port" && break
			kill -0 "${SERVER_PIDS[-1]}" 2>/dev/null || break
			sleep 0.1
		done
		if "$bin/pg_isready" -q -h 127.0.0.1 -p "$port"; then
			export TIDEMARK_TEST_PG="postgres://postgres:$SQL_PASSWORD@127.0.0.1:$port/postgres"
			export PATH="$bin:$PATH" # psql for the benchmarks
			log "postgres $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port"
			return 0
		fi
	done
	cat "$dir/server.log" >&2
	return 1
}

start_mariadb() {
	local dir port
	if ! command -v mariadbd >/dev/null || ! command -v mariadb-install-db >/dev/null; then
		log "installing MariaDB (Debian packages)"
		apt_install mariadb-server mariadb-client
	fi
	dir="$(mktemp -d /tmp/tidemark-mariadb.XXXXXX)"
	SCRATCH+=("$dir")
	local user=()
	[ "$(id -u)" = 0 ] && user=(--user=root)
	mariadb-install-db --no-defaults "${user[@]}" --datadir="$dir/data" --auth-root-authentication-method=socket \
		--skip-test-db >"$dir/install.log" 2>&1 || { cat "$dir/install.log" >&2; return 1; }
	for _ in 1 2 3; do
		port="$(free_port)"
		mariadbd --no-defaults "${user[@]}" --datadir="$dir/data" --socket="$dir/sock" --port="$port" \
			--bind-address=127.0.0.1 --skip-name-resolve --skip-log-bin --local-infile=1 \
			--character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci \
			--innodb-flush-log-at-trx-commit=0 --innodb-doublewrite=0 --innodb-buffer-pool-size=512M \
			--innodb-log-file-size=256M --max-connections=300 --log-error="$dir/server.log" \
			--pid-file="$dir/pid" >/dev/null 2>&1 &
		SERVER_PIDS+=($!)
		for _ in $(seq 1 150); do
			mariadb-admin --no-defaults -S "$dir/sock" -u root ping >/dev/null 2>&1 && break
			kill -0 "${SERVER_PIDS[-1]}" 2>/dev/null || break
			sleep 0.1
		done
		if mariadb-admin --no-defaults -S "$dir/sock" -u root ping >/dev/null 2>&1; then
			mariadb --no-defaults -S "$dir/sock" -u root -e \
				"CREATE USER 'tidemark'@'%' IDENTIFIED BY '$SQL_PASSWORD'; GRANT ALL ON *.* TO 'tidemark'@'%' WITH GRANT OPTION;"
			export TIDEMARK_TEST_MYSQL="mysql://tidemark:$SQL_PASSWORD@127.0.0.1:$port/"
			log "mariadb $(mariadbd --version | awk '{print $3}') on 127.0.0.1:$port"
			return 0
		fi
	done
	cat "$dir/server.log" >&2
	return 1
}

if [ "${TIDEMARK_SKIP_SQL:-}" = 1 ]; then
	log "TIDEMARK_SKIP_SQL=1: no PostgreSQL/MariaDB; SQL table tests skip"
else
	[ -n "${TIDEMARK_TEST_PG:-}" ] || start_postgres
	[ -n "${TIDEMARK_TEST_MYSQL:-}" ] || start_mariadb
fi

# --- setup: Python venvs (browser, pyiceberg and Spark tests) --------------
# venv_with NAME IMPORTS PACKAGE... makes the virtual environment venv-NAME
# in the test cache folder, with pip's PACKAGEs, unless its python already
# imports IMPORTS (a Python import list: what the tests use of it); either
# way VENV_PY is its python. A venv is made once per NAME (each names its
# versions), so a cached one takes well under a second.
venv_with() {
	local name=$1 imports=$2 venv base
	shift 2
	venv="${XDG_CACHE_HOME:-$HOME/.cache}/tidemark-test/venv-$name"
	VENV_PY="$venv/bin/python"
	"$VENV_PY" -c "import $imports" 2>/dev/null && return 0
	base=python3
	if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
		log "installing python3-venv (Debian package)"
		apt_install python3 python3-venv
		base=/usr/bin/python3
	fi
	log "making a venv with $* in $venv"
	rm -rf "$venv"
	mkdir -p "$(dirname "$venv")"
	"$base" -m venv "$venv"
	"$VENV_PY" -m pip install -q --disable-pip-version-check "$@"
}

# --- setup: a real browser (dashboard tests) -------------------------------
# e2e/browser_test.go drives `tidemark serve` with Playwright for Python and
# Debian's chromium (never a browser Playwright downloads itself). The
# virtual environment lives in a cache folder outside the repo and is made
# once per Playwright version; with chromium installed and the venv cached
# this block takes well under a second. The tests find them through
#   TIDEMARK_TEST_PYTHON   the venv's python, with playwright installed
#   TIDEMARK_TEST_CHROMIUM the system chromium
# and fail without them unless TIDEMARK_SKIP_BROWSER=1.
PLAYWRIGHT_VERSION=1.65.2

setup_browser() {
	local chromium py
	chromium="$(command -v chromium || true)"
	if [ -z "$chromium" ]; then
		log "installing chromium (Debian package)"
		apt_install chromium
		chromium="$(command -v chromium)"
	fi
	PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 venv_with "playwright-$PLAYWRIGHT_VERSION" playwright.sync_api \
		"playwright==$PLAYWRIGHT_VERSION"
	py="$VENV_PY"
	export TIDEMARK_TEST_PYTHON="$py" TIDEMARK_TEST_CHROMIUM="$chromium"
	log "browser: $("$chromium" --version 2>/dev/null | head -n1), playwright $PLAYWRIGHT_VERSION ($py)"
}

if [ "${TIDEMARK_SKIP_BROWSER:-}" = 1 ]; then
	log "TIDEMARK_SKIP_BROWSER=1: no chromium/Playwright; browser tests skip"
else
	[ -n "${TIDEMARK_TEST_PYTHON:-}" ] && [ -n "${TIDEMARK_TEST_CHROMIUM:-}" ] || setup_browser
fi

# --- setup: pyiceberg (Iceberg sink tests) ---------------------------------
# sink/iceberg's and e2e's Iceberg tests read what tidemark commits with
# pyiceberg from PyPI, through its SqlCatalog on the state database (SQLite
# or PostgreSQL). Its venv is cached as the Playwright one is; the tests
# find it through
#   TIDEMARK_TEST_PYICEBERG  the venv's python, with pyiceberg installed
# and fail without it.
PYICEBERG_VERSION=0.12.0

setup_pyiceberg() {
	local py
	venv_with "pyiceberg-$PYICEBERG_VERSION" 'pyiceberg.catalog.sql, pyarrow, psycopg2' \
		"pyiceberg[sql-sqlite,sql-postgres,pyarrow]==$PYICEBERG_VERSION"
	py="$VENV_PY"
	export TIDEMARK_TEST_PYICEBERG="$py"
	log "pyiceberg $PYICEBERG_VERSION ($py)"
}

[ -n "${TIDEMARK_TEST_PYICEBERG:-}" ] || setup_pyiceberg

# --- setup: Spark Connect (engine: spark) ----------------------------------
# One Spark Connect server for the whole run, from the pip package pyspark
# (which carries Spark's jars), on a free loopback port, with hadoop-aws
# (at the Hadoop version pyspark bundles) and its AWS SDK bundle on its
# classpath for s3a://. The venv and the jars live in the same cache folder
# as Playwright's, made once per version; the jars are fetched by their
# Maven coordinates through mvn (Debian's maven when missing), from the
# repositories Maven is configured with. The tests find them through
#   TIDEMARK_TEST_SPARK        sc://127.0.0.1:PORT
#   TIDEMARK_TEST_SPARK_HOME   the pip package's SPARK_HOME (tests that
#                              start a private server of their own)
#   TIDEMARK_TEST_SPARK_JARS   the s3a jars, comma-separated (for --jars)
#   TIDEMARK_TEST_SPARK_PYTHON the venv's python (pyspark's Connect client)
# and fail without them unless TIDEMARK_SKIP_SPARK=1. The JVM is kept
# small: local[2], 1 GB of driver memory, no UI, few shuffle partitions.
PYSPARK_VERSION=4.0.5
HADOOP_VERSION=3.4.1     # the hadoop-client-api jar inside pyspark $PYSPARK_VERSION
AWS_SDK_VERSION=2.24.6   # the bundle hadoop-aws $HADOOP_VERSION depends on

setup_spark_install() {
	local cache py jars f coord
	cache="${XDG_CACHE_HOME:-$HOME/.cache}/tidemark-test"
	venv_with "pyspark-$PYSPARK_VERSION" pyspark.sql.connect.session "pyspark[connect]==$PYSPARK_VERSION"
	py="$VENV_PY"
	command -v java >/dev/null || { log "installing Java 17 (Debian package)"; apt_install openjdk-17-jre-headless; }
	jars="$cache/spark-jars-hadoop-$HADOOP_VERSION"
	mkdir -p "$jars"
	# groupId:artifactId:version; the file is artifactId-version.jar.
	for coord in "org.apache.hadoop:hadoop-aws:$HADOOP_VERSION" "software.amazon.awssdk:bundle:$AWS_SDK_VERSION"; do
		f="$(echo "$coord" | cut -d: -f2)-$(echo "$coord" | cut -d: -f3).jar"
		[ -s "$jars/$f" ] && continue
		command -v mvn >/dev/null || { log "installing maven (Debian package)"; apt_install maven; }
		log "fetching $coord with mvn"
		# Into a fresh folder first, so that a cut-off fetch leaves no jar
		# that the next run would take for a whole one.
		rm -rf "$jars/.part"
		mkdir -p "$jars/.part"
		mvn -B dependency:copy -Dartifact="$coord" -DoutputDirectory="$jars/.part" >"$jars/.part/mvn.log" 2>&1 ||
			{ tail -n 40 "$jars/.part/mvn.log" >&2; return 1; }
		mv "$jars/.part/$f" "$jars/$f"
		rm -rf "$jars/.part"
	done
	export TIDEMARK_TEST_SPARK_PYTHON="$py"
	export TIDEMARK_TEST_SPARK_HOME="$("$py" -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')"
	export TIDEMARK_TEST_SPARK_JARS="$jars/hadoop-aws-$HADOOP_VERSION.jar,$jars/bundle-$AWS_SDK_VERSION.jar"
}

# spark_connect_server PORT LOG [MASTER [OPTION...]] starts a Spark Connect
# server in the background (internal/sparktest starts private ones alike),
# on MASTER (local[2] unless given), with more spark-submit OPTIONs. The s3a
# jars are local: URLs, which Spark loads where they lie, in the driver and
# in a cluster's executors (a plain path would be copied, 560 MB of SDK
# bundle, at every start; the driver's class path would shadow Spark's own
# logging).
spark_connect_server() {
	local port="$1" out="$2" master="${3:-local[2]}"
	shift 2
	[ $# -eq 0 ] || shift
	SPARK_HOME="$TIDEMARK_TEST_SPARK_HOME" "$TIDEMARK_TEST_SPARK_HOME/bin/spark-submit" \
		--class org.apache.spark.sql.connect.service.SparkConnectServer --master "$master" \
		--driver-memory 1g --jars "local:${TIDEMARK_TEST_SPARK_JARS//,/,local:}" \
		--conf spark.connect.grpc.binding.address=127.0.0.1 --conf spark.connect.grpc.binding.port="$port" \
		--conf spark.ui.enabled=false --conf spark.sql.shuffle.partitions=4 \
		--conf spark.driver.extraJavaOptions=-XX:+UseSerialGC "$@" >"$out" 2>&1 &
}

start_spark() {
	local dir port
	dir="$(mktemp -d /tmp/tidemark-spark.XXXXXX)"
	SCRATCH+=("$dir")
	for _ in 1 2 3; do
		port="$(free_port)"
		spark_connect_server "$port" "$dir/server.log"
		SERVER_PIDS+=($!)
		# A JVM on a loaded machine may take minutes to listen.
		for _ in $(seq 1 3000); do
			(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
			kill -0 "${SERVER_PIDS[-1]}" 2>/dev/null || break
			sleep 0.1
		done
		if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			export TIDEMARK_TEST_SPARK="sc://127.0.0.1:$port"
			log "spark connect $PYSPARK_VERSION on 127.0.0.1:$port"
			return 0
		fi
		# Not listening (the port taken, say): stop this one before the next.
		kill "${SERVER_PIDS[-1]}" 2>/dev/null || true
		wait "${SERVER_PIDS[-1]}" 2>/dev/null || true
	done
	cat "$dir/server.log" >&2
	return 1
}

# --- setup: a Spark standalone cluster (engine: spark on a cluster) --------
# The Spark engine's conformance suite and crash tests run on a real cluster
# too, not only in local[2]'s one JVM: a master and two workers (spark-class
# with the same pyspark jars: separate JVMs on loopback, 256 MB each for the
# daemons; each worker offers 1 core and 1 GB, its executor takes 512 MB),
# and a Spark Connect server (driver 1 GB) whose --master is that master.
# Sources and sinks are local folders, which every JVM sees (one machine),
# or S3 through s3a: the executors load the s3a jars from the same local:
# paths. The tests find it through
#   TIDEMARK_TEST_SPARK_CLUSTER        sc://127.0.0.1:PORT, the Connect server
#   TIDEMARK_TEST_SPARK_CLUSTER_MASTER spark://127.0.0.1:PORT, the master
#                                      (a test adds a worker there to kill)
# and fail without them unless TIDEMARK_SKIP_SPARK=1. Its JVMs start while
# the local server below starts.
SPARK_CLUSTER_DIR=

# spark_daemon LOG CLASS ARG... runs a master or a worker in the background.
spark_daemon() {
	local out="$1"
	shift
	SPARK_HOME="$TIDEMARK_TEST_SPARK_HOME" SPARK_LOCAL_IP=127.0.0.1 SPARK_DAEMON_MEMORY=256m \
		SPARK_DAEMON_JAVA_OPTS=-XX:+UseSerialGC "$TIDEMARK_TEST_SPARK_HOME/bin/spark-class" "$@" >"$out" 2>&1 &
}

# start_spark_cluster starts the master, waits until it listens, and starts
# the workers and the Connect server; wait_spark_cluster waits for them.
start_spark_cluster() {
	local dir port i
	dir="$(mktemp -d /tmp/tidemark-spark-cluster.XXXXXX)"
	SCRATCH+=("$dir")
	SPARK_CLUSTER_DIR="$dir"
	for _ in 1 2 3; do
		port="$(free_port)"
		spark_daemon "$dir/master.log" org.apache.spark.deploy.master.Master \
			--host 127.0.0.1 --port "$port" --webui-port 0
		SERVER_PIDS+=($!)
		for _ in $(seq 1 3000); do
			grep -q "I have been elected leader" "$dir/master.log" 2>/dev/null && break
			kill -0 "${SERVER_PIDS[-1]}" 2>/dev/null || break
			sleep 0.1
		done
		grep -q "I have been elected leader" "$dir/master.log" 2>/dev/null && break
		kill "${SERVER_PIDS[-1]}" 2>/dev/null || true
		wait "${SERVER_PIDS[-1]}" 2>/dev/null || true
		port=
	done
	[ -n "$port" ] || { cat "$dir/master.log" >&2; return 1; }
	export TIDEMARK_TEST_SPARK_CLUSTER_MASTER="spark://127.0.0.1:$port"
	for i in 1 2; do
		# Workers take ports of their own choosing (0: any free one).
		SPARK_LOCAL_DIRS="$dir/worker$i/local" spark_daemon "$dir/worker$i.log" \
			org.apache.spark.deploy.worker.Worker --host 127.0.0.1 --cores 1 --memory 1g --webui-port 0 \
			--work-dir "$dir/worker$i/work" "$TIDEMARK_TEST_SPARK_CLUSTER_MASTER"
		SERVER_PIDS+=($!)
	done
	start_spark_cluster_connect
}

# start_spark_cluster_connect starts the Connect server on the cluster. No
# locality wait: Spark would hold each task 3 s for an executor on the host
# its input file names ("localhost"), which no executor is (127.0.0.1).
start_spark_cluster_connect() {
	SPARK_CLUSTER_PORT="$(free_port)"
	SPARK_LOCAL_IP=127.0.0.1 spark_connect_server "$SPARK_CLUSTER_PORT" "$SPARK_CLUSTER_DIR/connect.log" \
		"$TIDEMARK_TEST_SPARK_CLUSTER_MASTER" \
		--conf spark.driver.host=127.0.0.1 --conf spark.executor.memory=512m --conf spark.executor.cores=1 \
		--conf spark.executor.extraJavaOptions=-XX:+UseSerialGC --conf spark.locality.wait=0
	SERVER_PIDS+=($!)
	SPARK_CLUSTER_PID=$!
}

wait_spark_cluster() {
	local dir="$SPARK_CLUSTER_DIR" f try
	for try in 1 2 3; do
		# A JVM on a loaded machine may take minutes to listen.
		for _ in $(seq 1 3000); do
			(exec 3<>"/dev/tcp/127.0.0.1/$SPARK_CLUSTER_PORT") 2>/dev/null && break
			kill -0 "$SPARK_CLUSTER_PID" 2>/dev/null || break
			sleep 0.1
		done
		(exec 3<>"/dev/tcp/127.0.0.1/$SPARK_CLUSTER_PORT") 2>/dev/null && break
		# Not listening (the port taken, say): stop this one, start another.
		kill "$SPARK_CLUSTER_PID" 2>/dev/null || true
		wait "$SPARK_CLUSTER_PID" 2>/dev/null || true
		[ "$try" = 3 ] && { cat "$dir/connect.log" >&2; return 1; }
		start_spark_cluster_connect
	done
	# Both workers registered, and the executor on each registered with the
	# server.
	for _ in $(seq 1 3000); do
		[ "$(grep -c "Registered executor" "$dir/connect.log")" -ge 2 ] && break
		sleep 0.1
	done
	if [ "$(grep -c "Registered executor" "$dir/connect.log")" -lt 2 ]; then
		for f in master worker1 worker2 connect; do
			printf '%s\n' "--- $f.log" >&2
			tail -n 30 "$dir/$f.log" >&2
		done
		return 1
	fi
	export TIDEMARK_TEST_SPARK_CLUSTER="sc://127.0.0.1:$SPARK_CLUSTER_PORT"
	log "spark cluster: master $TIDEMARK_TEST_SPARK_CLUSTER_MASTER, 2 workers, connect on 127.0.0.1:$SPARK_CLUSTER_PORT"
}

if [ "${TIDEMARK_SKIP_SPARK:-}" = 1 ]; then
	log "TIDEMARK_SKIP_SPARK=1: no Spark Connect server, no Spark cluster; Spark tests skip"
else
	setup_spark_install
	[ -n "${TIDEMARK_TEST_SPARK_CLUSTER:-}" ] || start_spark_cluster
	[ -n "${TIDEMARK_TEST_SPARK:-}" ] || start_spark
	[ -n "${TIDEMARK_TEST_SPARK_CLUSTER:-}" ] || wait_spark_cluster
fi

# --- setup: Iceberg's reference REST catalog ---------------------------------
# The Iceberg sink's tests with catalog: {rest: ...} run against Apache
# Iceberg's own REST catalog: the iceberg-open-api jar bundles its server
# (RESTCatalogAdapter over a JdbcCatalog), fetched once by its Maven
# coordinates into the test cache. Each test starts its own on a loopback
# port through internal/icebergrest (RestCatalog.java, with Java's source
# launcher), which finds the jar in TIDEMARK_TEST_ICEBERG_REST_JAR.
ICEBERG_REST_VERSION=1.10.0

setup_iceberg_rest() {
	local dir coord f
	dir="${XDG_CACHE_HOME:-$HOME/.cache}/tidemark-test/iceberg-rest-$ICEBERG_REST_VERSION"
	coord="org.apache.iceberg:iceberg-open-api:$ICEBERG_REST_VERSION"
	f="iceberg-open-api-$ICEBERG_REST_VERSION.jar"
	if [ ! -s "$dir/$f" ]; then
		command -v java >/dev/null || { log "installing Java 17 (Debian package)"; apt_install openjdk-17-jre-headless; }
		command -v mvn >/dev/null || { log "installing maven (Debian package)"; apt_install maven; }
		log "fetching $coord with mvn"
		# Into a fresh folder first: a cut-off fetch leaves no jar that the
		# next run would take for a whole one.
		rm -rf "$dir/.part"
		mkdir -p "$dir/.part"
		mvn -B dependency:copy -Dartifact="$coord" -DoutputDirectory="$dir/.part" >"$dir/.part/mvn.log" 2>&1 ||
			{ tail -n 40 "$dir/.part/mvn.log" >&2; return 1; }
		mv "$dir/.part/$f" "$dir/$f"
		rm -rf "$dir/.part"
	fi
	export TIDEMARK_TEST_ICEBERG_REST_JAR="$dir/$f"
	log "iceberg REST catalog $ICEBERG_REST_VERSION ($TIDEMARK_TEST_ICEBERG_REST_JAR)"
}
[ -n "${TIDEMARK_TEST_ICEBERG_REST_JAR:-}" ] || setup_iceberg_rest

# --- release build -----------------------------------------------------------
# scripts/release.sh on every change: the versioned linux amd64 and arm64
# binaries build, and the amd64 one says its version, commit and DuckDB's
# version, and the Python package's wheels (pip's, in a venv cached as the
# test venvs are). arm64 is cross-built with Debian's cross gcc. Its -trimpath
# builds are cached whatever the checkout's folder: cold, both take about
# 5 CPU-minutes (arm64 4.4, measured on 2 cores); with the cache warm, a
# change costs a few seconds of compiling and linking. TIDEMARK_SKIP_RELEASE=1
# (never set in CI) skips it.
if [ "${TIDEMARK_SKIP_RELEASE:-}" = 1 ]; then
	log "TIDEMARK_SKIP_RELEASE=1: no release build"
else
	if ! command -v aarch64-linux-gnu-gcc >/dev/null || ! command -v aarch64-linux-gnu-g++ >/dev/null; then
		log "installing gcc-aarch64-linux-gnu and g++-aarch64-linux-gnu (Debian packages) for the arm64 release build"
		apt_install gcc-aarch64-linux-gnu g++-aarch64-linux-gnu
	fi
	release_dist="$(mktemp -d /tmp/tidemark-dist.XXXXXX)"
	SCRATCH+=("$release_dist")
	DIST="$release_dist" scripts/release.sh "ci-$(git rev-parse --short HEAD 2>/dev/null || echo local)"
	# Its wheels (scripts/wheels.sh) for e2e's TestWheel, which installs one
	# into a fresh venv (and builds them itself without this).
	export TIDEMARK_TEST_WHEELS="$release_dist"
fi

# --- docs site ---------------------------------------------------------------
# scripts/docs.sh builds the docs site (mkdocs.yml, docs/) with mkdocs build
# --strict, mkdocs-material pinned in a venv cached as the ones above: a
# broken link or anchor fails here. internal/docgen's tests build broken
# copies of the site through the same script; the generated pages are
# checked to be current by TestCLIReference, TestJobFileReference,
# TestOpenAPIReference and TestMetricsReference.
log "scripts/docs.sh"
scripts/docs.sh

# --- vet and test ----------------------------------------------------------
log "go vet ./..."
go vet ./...

log "staticcheck ./..."
staticcheck ./...

log "go test ./... -count=1 -timeout $TEST_TIMEOUT $*"
go test ./... -count=1 -timeout "$TEST_TIMEOUT" "$@"

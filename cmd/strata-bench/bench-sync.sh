#!/usr/bin/env bash
# make bench-sync: runs cmd/strata-bench -sync (offline sync's pull, GET
# /sync/{tb}) against a Strata server started here, once per engine, each on
# fresh storage, and stops it afterwards. The table is seeded first; the
# server is then restarted on the same storage, so that its peak memory
# (VmHWM) is the pull's alone, not the seeding's.
#
#   ENGINES  engines to measure (default "sqlite postgres"; postgres is
#            skipped when no server answers at PGHOST:PGPORT)
#   ROWS     rows in the table (default 100000)
#   LIMIT    rows per page of the pull (default 1000)
#   ROUNDS   incremental pulls measured, each after CHANGES changes (5, 100)
#   PGHOST, PGPORT, PGUSER  the PostgreSQL server (127.0.0.1, 5432, postgres)
#   OUT      CSV the results are appended to (default bin/bench-sync.csv)
#   PORT     port Strata listens on, on 127.0.0.1 (default 18292); its
#            metrics on PORT+1
#   BENCH_ARGS  further flags for strata-bench
set -euo pipefail
cd "$(dirname "$0")/../.."

ENGINES=${ENGINES:-sqlite postgres}
ROWS=${ROWS:-100000}
LIMIT=${LIMIT:-1000}
ROUNDS=${ROUNDS:-5}
CHANGES=${CHANGES:-100}
PGHOST=${PGHOST:-127.0.0.1}
PGPORT=${PGPORT:-5432}
PGUSER=${PGUSER:-postgres}
OUT=${OUT:-bin/bench-sync.csv}
PORT=${PORT:-18292}
BIN=${BIN:-bin}
MPORT=$((PORT + 1))

echo "cores: $(nproc); load average: $(cut -d' ' -f1-3 /proc/loadavg); commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
work=$(mktemp -d)
pid=
db=
cleanup() {
	if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
	if [ -n "$db" ]; then psql -h "$PGHOST" -p "$PGPORT" -U "$PGUSER" -qc "DROP DATABASE IF EXISTS $db" postgres || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

# start runs the server on $work/data (and $dburl) and waits for it.
start() {
	SERVICE_ALLOW_NEW_APP=1 DATABASE_URL=$dburl STRATA_METRICS_ADDR="127.0.0.1:$MPORT" \
		"$BIN/strata" serve --data-dir "$work/data" --addr "127.0.0.1:$PORT" >>"$work/server.log" 2>&1 &
	pid=$!
	for _ in $(seq 100); do
		curl -fs "http://127.0.0.1:$PORT/api/info" >/dev/null 2>&1 && return
		sleep 0.2
	done
}
stop() {
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	pid=
}

for engine in $ENGINES; do
	dburl=
	if [ "$engine" = postgres ]; then
		if ! psql -h "$PGHOST" -p "$PGPORT" -U "$PGUSER" -qAtc 'select 1' postgres >/dev/null 2>&1; then
			echo "postgres: no server at $PGHOST:$PGPORT, skipped"
			continue
		fi
		db=strata_syncbench_$$
		psql -h "$PGHOST" -p "$PGPORT" -U "$PGUSER" -qc "CREATE DATABASE $db" postgres
		dburl="postgres://$PGUSER@$PGHOST:$PGPORT/$db?sslmode=disable"
	fi
	rm -rf "$work/data" "$work/server.log"
	echo
	echo "== $engine"
	start
	# shellcheck disable=SC2086
	"$BIN/strata-bench" -url "http://127.0.0.1:$PORT" -sync -sync-step seed -rows "$ROWS" ${BENCH_ARGS:-}
	stop
	start
	# shellcheck disable=SC2086
	"$BIN/strata-bench" -url "http://127.0.0.1:$PORT" -sync -sync-step pull -metrics "http://127.0.0.1:$MPORT/metrics" \
		-rows "$ROWS" -sync-limit "$LIMIT" -sync-rounds "$ROUNDS" -sync-changes "$CHANGES" -csv "$OUT" ${BENCH_ARGS:-}
	echo "server peak memory since its restart (VmHWM): $(awk '/VmHWM/ {print $2, $3}' /proc/$pid/status)"
	stop
	cp "$work/server.log" "$OUT.$engine.server.log"
	if [ -n "$db" ]; then
		psql -h "$PGHOST" -p "$PGPORT" -U "$PGUSER" -qc "DROP DATABASE $db" postgres
		db=
	fi
done
echo "results appended to $OUT"

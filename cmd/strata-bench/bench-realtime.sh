#!/usr/bin/env bash
# make bench-realtime: runs cmd/strata-bench -realtime (live changes over
# Server-Sent Events) against a Strata server started here, once per engine,
# each on fresh storage, and stops it afterwards.
#
#   ENGINES      engines to measure (default "sqlite postgres"; postgres is
#                skipped when no server answers at PGHOST:PGPORT)
#   SUBSCRIBERS  streams open at once (default 500)
#   RATE         writes per second (default 200)
#   DURATION     time the writer runs, with and without subscribers (default 30s)
#   ROWS         rows in the table before anything is measured (default 10000)
#   USERS, FILTERS  accounts the streams are spread over (5), distinct filters (10)
#   PGHOST, PGPORT, PGUSER  the PostgreSQL server (127.0.0.1, 5432, postgres)
#   OUT          CSV the results are appended to (default bin/bench-realtime.csv);
#                the server's log is kept beside it as OUT.<engine>.server.log
#   PORT         port Strata listens on, on 127.0.0.1 (default 18290); its
#                metrics on PORT+1
#   BENCH_ARGS   further flags for strata-bench
#
# The server is started with STRATA_REALTIME_PER_APP and _PER_USER set to
# admit every stream (the defaults, 1000 and 20, would refuse them).
set -euo pipefail
cd "$(dirname "$0")/../.."

ENGINES=${ENGINES:-sqlite postgres}
SUBSCRIBERS=${SUBSCRIBERS:-500}
RATE=${RATE:-200}
DURATION=${DURATION:-30s}
ROWS=${ROWS:-10000}
USERS=${USERS:-5}
FILTERS=${FILTERS:-10}
PGHOST=${PGHOST:-127.0.0.1}
PGPORT=${PGPORT:-5432}
PGUSER=${PGUSER:-postgres}
OUT=${OUT:-bin/bench-realtime.csv}
PORT=${PORT:-18290}
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

for engine in $ENGINES; do
	dburl=
	if [ "$engine" = postgres ]; then
		if ! psql -h "$PGHOST" -p "$PGPORT" -U "$PGUSER" -qAtc 'select 1' postgres >/dev/null 2>&1; then
			echo "postgres: no server at $PGHOST:$PGPORT, skipped"
			continue
		fi
		db=strata_rtbench_$$
		psql -h "$PGHOST" -p "$PGPORT" -U "$PGUSER" -qc "CREATE DATABASE $db" postgres
		dburl="postgres://$PGUSER@$PGHOST:$PGPORT/$db?sslmode=disable"
	fi
	rm -rf "$work/data"
	SERVICE_ALLOW_NEW_APP=1 DATABASE_URL=$dburl STRATA_METRICS_ADDR="127.0.0.1:$MPORT" \
		STRATA_REALTIME_PER_APP=$((SUBSCRIBERS + 10)) STRATA_REALTIME_PER_USER=$((SUBSCRIBERS + 10)) \
		"$BIN/strata" serve --data-dir "$work/data" --addr "127.0.0.1:$PORT" >"$work/server.log" 2>&1 &
	pid=$!
	for _ in $(seq 50); do
		curl -fs "http://127.0.0.1:$PORT/api/info" >/dev/null 2>&1 && break
		sleep 0.2
	done
	echo
	echo "== $engine"
	# shellcheck disable=SC2086
	"$BIN/strata-bench" -url "http://127.0.0.1:$PORT" -realtime -metrics "http://127.0.0.1:$MPORT/metrics" \
		-rows "$ROWS" -subscribers "$SUBSCRIBERS" -rate "$RATE" -duration "$DURATION" \
		-users "$USERS" -filters "$FILTERS" -csv "$OUT" ${BENCH_ARGS:-}
	echo "server peak memory (VmHWM): $(awk '/VmHWM/ {print $2, $3}' /proc/$pid/status)"
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	pid=
	cp "$work/server.log" "$OUT.$engine.server.log"
	if [ -n "$db" ]; then
		psql -h "$PGHOST" -p "$PGPORT" -U "$PGUSER" -qc "DROP DATABASE $db" postgres
		db=
	fi
done
echo "results appended to $OUT"

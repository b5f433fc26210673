#!/usr/bin/env bash
# make bench-load: runs cmd/strata-bench against a Strata server started here,
# once per engine, each on fresh storage, and stops it afterwards.
#
#   ENGINES   engines to measure (default "sqlite postgres"; postgres is
#             skipped when no server answers at PGHOST:PGPORT)
#   ROWS      sizes (default 10000,100000,1000000)
#   DURATION  measured time per operation (default 10s); CLIENTS (default 16)
#   PGHOST, PGPORT, PGUSER  the PostgreSQL server (127.0.0.1, 5432, postgres)
#   OUT       CSV the results are appended to (default bin/bench-load.csv);
#             the server's log is kept beside it as OUT.<engine>.server.log
#   PORT      port Strata listens on, on 127.0.0.1 (default 18190)
#   BENCH_ARGS  further flags for strata-bench
set -euo pipefail
cd "$(dirname "$0")/../.."

ENGINES=${ENGINES:-sqlite postgres}
ROWS=${ROWS:-10000,100000,1000000}
DURATION=${DURATION:-10s}
CLIENTS=${CLIENTS:-16}
PGHOST=${PGHOST:-127.0.0.1}
PGPORT=${PGPORT:-5432}
PGUSER=${PGUSER:-postgres}
OUT=${OUT:-bin/bench-load.csv}
PORT=${PORT:-18190}
BIN=${BIN:-bin}

echo "cores: $(nproc); commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
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
		db=strata_bench_$$
		psql -h "$PGHOST" -p "$PGPORT" -U "$PGUSER" -qc "CREATE DATABASE $db" postgres
		dburl="postgres://$PGUSER@$PGHOST:$PGPORT/$db?sslmode=disable"
	fi
	rm -rf "$work/data"
	SERVICE_ALLOW_NEW_APP=1 DATABASE_URL=$dburl "$BIN/strata" serve --data-dir "$work/data" --addr "127.0.0.1:$PORT" >"$work/server.log" 2>&1 &
	pid=$!
	for _ in $(seq 50); do
		curl -fs "http://127.0.0.1:$PORT/api/info" >/dev/null 2>&1 && break
		sleep 0.2
	done
	# shellcheck disable=SC2086
	"$BIN/strata-bench" -url "http://127.0.0.1:$PORT" -rows "$ROWS" -duration "$DURATION" \
		-clients "$CLIENTS" -csv "$OUT" ${BENCH_ARGS:-}
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

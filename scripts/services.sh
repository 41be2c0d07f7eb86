#!/usr/bin/env bash
# services.sh start|stop|status DIR
# services.sh postgres-start|postgres-stop DIR
#
# Runs the three services parley needs, with all their data under DIR:
# PostgreSQL (DIR/postgres), the Temporal dev server (DIR/temporal.db) and
# MinIO (DIR/minio). `start` waits until each answers, creates the database
# `parley` and writes DIR/env (export lines) for the app and the tests.
# `stop` stops whatever is running for DIR and may be called any number of
# times. Pids go to DIR/*.pid, logs to DIR/logs/*.log. postgres-start and
# postgres-stop do the same for PostgreSQL alone (scripts/cluster.sh runs its
# own Temporal server and MinIO nodes beside it).
#
# Ports (defaults are for `make dev`; tests pass free ones):
#   PARLEY_PG_PORT=5432 PARLEY_TEMPORAL_PORT=7233 PARLEY_TEMPORAL_UI_PORT=8233
#   PARLEY_MINIO_PORT=9000 PARLEY_MINIO_CONSOLE_PORT=9001
# Other knobs:
#   DATABASE_URL           when set, no PostgreSQL is started; DIR/env passes it on
#   PARLEY_NO_FSYNC=1      nothing waits for the disk (tests): PostgreSQL without
#                          fsync, synchronous_commit and full_page_writes,
#                          Temporal's SQLite in WAL mode with synchronous=off
#   PARLEY_PG_MAX_CONNECTIONS  PostgreSQL's max_connections (default: its own, 100)
#   PARLEY_HEADLESS=1      no Temporal web UI, no MinIO console (tests)
#   PARLEY_TOOLS_BIN       where temporal and minio are (default: <repo>/bin)
#   PARLEY_PG_BIN          PostgreSQL server binaries (default: newest
#                          /usr/lib/postgresql/*/bin)
#   MINIO_ACCESS_KEY, MINIO_SECRET_KEY  MinIO root credentials
#                          (default parley / parley-secret)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TOOLS_BIN=${PARLEY_TOOLS_BIN:-$ROOT/bin}

PG_PORT=${PARLEY_PG_PORT:-5432}
TEMPORAL_PORT=${PARLEY_TEMPORAL_PORT:-7233}
TEMPORAL_UI_PORT=${PARLEY_TEMPORAL_UI_PORT:-8233}
MINIO_PORT=${PARLEY_MINIO_PORT:-9000}
MINIO_CONSOLE_PORT=${PARLEY_MINIO_CONSOLE_PORT:-9001}
MINIO_USER=${MINIO_ACCESS_KEY:-parley}
MINIO_PASSWORD=${MINIO_SECRET_KEY:-parley-secret}
READY_TIMEOUT=${PARLEY_READY_TIMEOUT:-60}

log() { echo "services: $*" >&2; }

usage() {
	echo "usage: $0 start|stop|status|postgres-start|postgres-stop DIR" >&2
	exit 2
}

(($# == 2)) || usage
for port in "$PG_PORT" "$TEMPORAL_PORT" "$TEMPORAL_UI_PORT" "$MINIO_PORT" "$MINIO_CONSOLE_PORT"; do
	if ! [[ $port =~ ^[0-9]+$ ]] || ((port < 1 || port > 65535)); then
		log "invalid port '$port' (PARLEY_*_PORT)"
		exit 2
	fi
done
action=$1
case $action in
start | postgres-start) mkdir -p "$2" ;;
stop | status | postgres-stop) [[ -d $2 ]] || exit 0 ;;
*) usage ;;
esac
DIR=$(cd "$2" && pwd)
LOGS=$DIR/logs
PGDATA=$DIR/postgres

is_root() { ((EUID == 0)); }

# as_pg runs a PostgreSQL server command as the postgres user when we are
# root (initdb and postgres refuse to run as root).
as_pg() {
	if is_root; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

pg_bin() {
	if [[ -n ${PARLEY_PG_BIN:-} ]]; then
		echo "$PARLEY_PG_BIN"
		return
	fi
	local d
	d=$(compgen -G '/usr/lib/postgresql/*/bin/initdb' | sort -V | tail -n 1 || true)
	if [[ -n $d ]]; then
		dirname "$d"
	elif command -v initdb >/dev/null; then
		dirname "$(command -v initdb)"
	else
		log "no PostgreSQL server binaries (initdb); run scripts/ensure-packages.sh"
		exit 1
	fi
}

# proc_matches PID TEXT: PID is a live process whose command line contains
# TEXT. This keeps us from signalling an unrelated process that reused a
# stale pid, and treats zombies (empty cmdline) as gone.
proc_matches() {
	local pid=$1 text=$2 cmdline
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	cmdline=$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline") || return 1
	[[ -n $cmdline && $cmdline == *"$text"* ]]
}

# log_mark NAME: a line in NAME's log where this start begins, so the tail
# shown on failure is not mistaken for an earlier run's.
log_mark() { echo "==== services.sh start $(date -u +%FT%TZ) ====" >>"$LOGS/$1.log"; }

port_in_use() {
	timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null
}

require_free_port() { # require_free_port PORT WHAT
	if port_in_use "$1"; then
		log "port $1 for $2 is already in use; set the PARLEY_*_PORT variables (see scripts/services.sh)"
		return 1
	fi
}

tail_log() { # tail_log NAME
	local f=$LOGS/$1.log
	if [[ -n $1 && -f $f ]]; then
		echo "---- last 30 lines of $f ----" >&2
		tail -n 30 "$f" >&2
		echo "----" >&2
	fi
}

# fail NAME MESSAGE: report (with the tail of NAME's log, if NAME is given),
# stop what was started, exit.
fail() {
	log "$2"
	tail_log "$1"
	stop_all || true
	exit 1
}

# ---- processes we start ourselves (temporal, minio) ------------------------

# stop_proc NAME MATCH: stop the process in DIR/NAME.pid if it is ours.
stop_proc() {
	local name=$1 match=$2 pidfile=$DIR/$1.pid pid i
	[[ -f $pidfile ]] || return 0
	pid=$(<"$pidfile")
	if proc_matches "$pid" "$match"; then
		kill -TERM "$pid" 2>/dev/null || true
		for ((i = 0; i < 150; i++)); do
			proc_matches "$pid" "$match" || break
			sleep 0.1
		done
		if proc_matches "$pid" "$match"; then
			log "$name (pid $pid) did not stop in 15 s; killing it"
			kill -KILL "$pid" 2>/dev/null || true
		fi
		log "stopped $name"
	fi
	rm -f "$pidfile"
}

# wait_ready NAME PID MATCH CHECK...: poll CHECK until it succeeds, the
# process dies, or READY_TIMEOUT passes.
wait_ready() {
	local name=$1 pid=$2 match=$3 deadline
	shift 3
	deadline=$((SECONDS + READY_TIMEOUT))
	until "$@" >/dev/null 2>&1; do
		proc_matches "$pid" "$match" || fail "$name" "$name exited during start-up"
		((SECONDS < deadline)) || fail "$name" "$name not ready after ${READY_TIMEOUT}s"
		sleep 0.2
	done
}

# ---- PostgreSQL -------------------------------------------------------------

pg_socket_dir() {
	# Unix socket paths are limited to 107 bytes.
	if ((${#DIR} + 24 < 100)); then
		echo "$DIR/run"
	else
		echo /tmp
	fi
}

pg_pid() { head -n 1 "$PGDATA/postmaster.pid" 2>/dev/null || true; }
pg_running() { proc_matches "$(pg_pid)" "$PGDATA"; }

# remove_stale_lock FILE: drop a PostgreSQL lock file whose pid is not a
# running postgres (after a crash the pid may belong to anything by now, and
# postgres then refuses to start).
remove_stale_lock() {
	local f=$1 pid
	[[ -f $f ]] || return 0
	pid=$(head -n 1 "$f" 2>/dev/null || true)
	pid=${pid#-} # socket lock files may hold a negative pid
	if ! proc_matches "$pid" postgres; then
		log "removing stale $f (pid ${pid:-?} is not a running postgres)"
		rm -f "$f" "${f%.lock}"
	fi
}

start_postgres() {
	local bin sock opts port
	bin=$(pg_bin)
	sock=$(pg_socket_dir)

	if is_root && ! runuser -u postgres -- test -x "$DIR"; then
		log "user postgres cannot reach $DIR (a parent directory is not traversable);"
		log "use a services directory under a world-traversable path, e.g. /tmp or /work"
		exit 1
	fi

	if pg_running; then
		port=$(sed -n 4p "$PGDATA/postmaster.pid")
		if [[ $port == "$PG_PORT" ]]; then
			log "postgres already running for $DIR on port $PG_PORT; reusing it"
			pg_pid >"$DIR/postgres.pid"
			return 0
		fi
		log "postgres running for $DIR on port $port; restarting on $PG_PORT"
		stop_postgres
	fi
	remove_stale_lock "$PGDATA/postmaster.pid"
	remove_stale_lock "$sock/.s.PGSQL.$PG_PORT.lock"
	require_free_port "$PG_PORT" postgres || fail "" "cannot start postgres"

	if [[ ! -s $PGDATA/PG_VERSION ]]; then
		log "initdb $PGDATA"
		rm -rf "$PGDATA"
		mkdir -p "$PGDATA"
		chmod 700 "$PGDATA"
		if is_root; then chown postgres: "$PGDATA"; fi
		as_pg "$bin/initdb" -D "$PGDATA" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 \
			>>"$LOGS/postgres-initdb.log" 2>&1 || fail postgres-initdb "initdb failed"
	fi

	if [[ $sock != /tmp ]]; then
		mkdir -p "$sock"
		if is_root; then chown postgres: "$sock"; fi
	fi
	log_mark postgres
	if is_root; then chown postgres: "$LOGS/postgres.log"; fi

	opts="-p $PG_PORT -k '$sock' -c listen_addresses=127.0.0.1"
	if [[ ${PARLEY_NO_FSYNC:-} == 1 ]]; then
		opts+=" -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
	fi
	if [[ -n ${PARLEY_PG_MAX_CONNECTIONS:-} ]]; then
		[[ $PARLEY_PG_MAX_CONNECTIONS =~ ^[0-9]+$ ]] || fail "" "invalid PARLEY_PG_MAX_CONNECTIONS '$PARLEY_PG_MAX_CONNECTIONS'"
		opts+=" -c max_connections=$PARLEY_PG_MAX_CONNECTIONS"
	fi
	as_pg "$bin/pg_ctl" -D "$PGDATA" -l "$LOGS/postgres.log" -o "$opts" -w -t "$READY_TIMEOUT" start \
		>/dev/null || fail postgres "postgres did not start"
	pg_pid >"$DIR/postgres.pid"

	local deadline=$((SECONDS + READY_TIMEOUT))
	until pg_isready -q -h 127.0.0.1 -p "$PG_PORT" -U postgres; do
		((SECONDS < deadline)) || fail postgres "postgres not ready after ${READY_TIMEOUT}s"
		sleep 0.2
	done
	log "postgres ready on 127.0.0.1:$PG_PORT"
}

create_database() {
	local psql=(psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres)
	if [[ $("${psql[@]}" -tAc "SELECT 1 FROM pg_database WHERE datname = 'parley'") != 1 ]]; then
		"${psql[@]}" -c 'CREATE DATABASE parley' || fail postgres "could not create database parley"
		log "created database parley"
	fi
}

stop_postgres() {
	[[ -d $PGDATA ]] || return 0
	if pg_running; then
		if as_pg "$(pg_bin)/pg_ctl" -D "$PGDATA" -m fast -w -t 60 stop >/dev/null; then
			log "stopped postgres"
		else
			log "pg_ctl stop failed for $PGDATA"
			return 1
		fi
	fi
	rm -f "$DIR/postgres.pid"
}

# ---- Temporal -------------------------------------------------------------

temporal_ready() {
	timeout 5 "$TOOLS_BIN/temporal" operator namespace describe --namespace default \
		--address "127.0.0.1:$TEMPORAL_PORT"
}

start_temporal() {
	local pid ui=(--ui-port "$TEMPORAL_UI_PORT") sync=()
	[[ -x $TOOLS_BIN/temporal ]] || {
		log "$TOOLS_BIN/temporal is missing; run: make tools"
		exit 1
	}
	stop_proc temporal "$DIR/temporal.db" # left over from a crash
	require_free_port "$TEMPORAL_PORT" temporal || fail "" "cannot start temporal"
	if [[ ${PARLEY_HEADLESS:-} == 1 ]]; then
		ui=(--headless)
	else
		require_free_port "$TEMPORAL_UI_PORT" "temporal web UI" || fail "" "cannot start temporal"
	fi
	if [[ ${PARLEY_NO_FSYNC:-} == 1 ]]; then
		sync=(--sqlite-pragma journal_mode=wal --sqlite-pragma synchronous=off)
	fi
	log_mark temporal
	# One partition per task queue (the server's default is 4): a one-node
	# server with a few pollers a queue gains nothing from more, and a task
	# written to a partition that no poller is on waits to be forwarded to
	# one that has (seen as a chunk starting seconds after its slot freed).
	setsid "$TOOLS_BIN/temporal" server start-dev \
		--ip 127.0.0.1 --port "$TEMPORAL_PORT" "${ui[@]}" "${sync[@]}" \
		--dynamic-config-value matching.numTaskqueueReadPartitions=1 \
		--dynamic-config-value matching.numTaskqueueWritePartitions=1 \
		--db-filename "$DIR/temporal.db" --log-level warn \
		</dev/null >>"$LOGS/temporal.log" 2>&1 &
	pid=$!
	echo "$pid" >"$DIR/temporal.pid"
	wait_ready temporal "$pid" "$DIR/temporal.db" temporal_ready
	log "temporal ready on 127.0.0.1:$TEMPORAL_PORT"
}

# ---- MinIO ------------------------------------------------------------------

minio_ready() {
	curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:$MINIO_PORT/minio/health/ready"
}

start_minio() {
	local pid browser=on
	[[ -x $TOOLS_BIN/minio ]] || {
		log "$TOOLS_BIN/minio is missing; run: make tools"
		exit 1
	}
	stop_proc minio "$DIR/minio"
	require_free_port "$MINIO_PORT" minio || fail "" "cannot start minio"
	if [[ ${PARLEY_HEADLESS:-} == 1 ]]; then
		browser=off
	else
		require_free_port "$MINIO_CONSOLE_PORT" "minio console" || fail "" "cannot start minio"
	fi
	mkdir -p "$DIR/minio"
	log_mark minio
	# A multipart upload a client abandoned (cut off mid-upload) is only
	# ever MinIO's: it purges those older than STALE_UPLOADS_EXPIRY (24h by
	# default) on a scan every STALE_UPLOADS_CLEANUP_INTERVAL (6h). Ours:
	# 6h, scanned hourly, in step with PARLEY_UPLOAD_ORPHAN_AFTER, which
	# covers the uploads that did complete (docs/decisions.md, "Orphaned
	# uploads").
	MINIO_ROOT_USER=$MINIO_USER MINIO_ROOT_PASSWORD=$MINIO_PASSWORD \
		MINIO_BROWSER=$browser MINIO_UPDATE=off \
		MINIO_API_STALE_UPLOADS_EXPIRY=${MINIO_API_STALE_UPLOADS_EXPIRY:-6h} \
		MINIO_API_STALE_UPLOADS_CLEANUP_INTERVAL=${MINIO_API_STALE_UPLOADS_CLEANUP_INTERVAL:-1h} \
		setsid "$TOOLS_BIN/minio" server "$DIR/minio" \
		--address "127.0.0.1:$MINIO_PORT" --console-address "127.0.0.1:$MINIO_CONSOLE_PORT" \
		</dev/null >>"$LOGS/minio.log" 2>&1 &
	pid=$!
	echo "$pid" >"$DIR/minio.pid"
	wait_ready minio "$pid" "$DIR/minio" minio_ready
	log "minio ready on 127.0.0.1:$MINIO_PORT"
}

# ---- env file -------------------------------------------------------------

quote() { printf "'%s'" "${1//\'/\'\\\'\'}"; }

write_env() {
	local db_url=$1 tmp=$DIR/env.tmp
	{
		echo "# Written by scripts/services.sh start; source it: . $DIR/env"
		echo "export DATABASE_URL=$(quote "$db_url")"
		echo "export TEMPORAL_ADDRESS=$(quote "127.0.0.1:$TEMPORAL_PORT")"
		echo "export TEMPORAL_NAMESPACE=default"
		echo "export MINIO_ENDPOINT=$(quote "127.0.0.1:$MINIO_PORT")"
		echo "export MINIO_ACCESS_KEY=$(quote "$MINIO_USER")"
		echo "export MINIO_SECRET_KEY=$(quote "$MINIO_PASSWORD")"
		echo "export MINIO_BUCKET=parley"
		echo "export MINIO_USE_SSL=false"
	} >"$tmp"
	chmod 600 "$tmp"
	mv -f "$tmp" "$DIR/env"
}

# ---- actions --------------------------------------------------------------

stop_all() {
	local rc=0
	stop_proc minio "$DIR/minio" || rc=1
	stop_proc temporal "$DIR/temporal.db" || rc=1
	stop_postgres || rc=1
	return "$rc"
}

status() {
	local rc=0
	if pg_running; then echo "postgres running (pid $(pg_pid))"; else echo "postgres stopped"; rc=1; fi
	local name match
	for name in temporal minio; do
		match=$DIR/minio
		[[ $name == temporal ]] && match=$DIR/temporal.db
		if [[ -f $DIR/$name.pid ]] && proc_matches "$(<"$DIR/$name.pid")" "$match"; then
			echo "$name running (pid $(<"$DIR/$name.pid"))"
		else
			echo "$name stopped"
			rc=1
		fi
	done
	return "$rc"
}

case $action in
start)
	if is_root; then chmod 755 "$DIR"; fi
	mkdir -p "$LOGS"
	rm -f "$DIR/env"
	if [[ -n ${DATABASE_URL:-} ]]; then
		log "DATABASE_URL is set; not starting postgres"
		db_url=$DATABASE_URL
	else
		start_postgres
		create_database
		db_url="postgres://postgres@127.0.0.1:$PG_PORT/parley?sslmode=disable"
	fi
	start_temporal
	start_minio
	write_env "$db_url"
	log "env written to $DIR/env"
	;;
stop) stop_all ;;
status) status ;;
postgres-start)
	if is_root; then chmod 755 "$DIR"; fi
	mkdir -p "$LOGS"
	start_postgres
	create_database
	;;
postgres-stop) stop_postgres ;;
esac

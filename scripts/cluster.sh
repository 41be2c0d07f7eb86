#!/usr/bin/env bash
# cluster.sh: the production topology on one machine (`make cluster`).
#
#   scripts/cluster.sh up              start whatever is not running, print the addresses
#   scripts/cluster.sh down            stop everything (make cluster-stop); the data stays
#   scripts/cluster.sh status          one line per process
#   scripts/cluster.sh start|stop|kill|restart NAME
#                                      one process (kill is SIGKILL; the chaos run uses these)
#   scripts/cluster.sh names           the process names, in start order
#
# Everything lives under .cluster/ (PARLEY_CLUSTER_DIR overrides): data,
# logs (.cluster/logs), pid files (.cluster/run), the generated configs, the
# chosen ports (.cluster/ports) and the env file other shells source
# (.cluster/env). The processes:
#
#   postgres          PostgreSQL (scripts/services.sh): Parley's database and Temporal's two
#   temporal          Temporal's own server (go.temporal.io/server) on PostgreSQL, SQL
#                     visibility; schemas set up with temporal-sql-tool
#   temporal-ui       Temporal's web UI (github.com/temporalio/ui-server)
#   minio1..minio4    one MinIO deployment erasure-coded over four node processes (EC:2:
#                     any one node may be down and media is still read and written)
#   front             nginx: the S3 endpoint in front of the four MinIO nodes, and the
#                     API's public origin in front of the two API processes
#   carrier, voice-provider, mailcatcher   the local stand-ins
#   api1, api2        `parley api`
#   worker1, worker2  `parley worker`
#
# Ports: each PARLEY_CLUSTER_<NAME>_PORT (see `ports` below), else a free
# port chosen on the first start and kept in .cluster/ports.
# PARLEY_CLUSTER_HISTORY_SHARDS (default 4) is fixed when Temporal's schema
# is first set up: changing it later needs a new .cluster/.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=$ROOT/bin
PARLEY=$BIN/parley
DIR=${PARLEY_CLUSTER_DIR:-$ROOT/.cluster}
DEV_EMAIL=${PARLEY_DEV_EMAIL:-dev@parley.local}
READY_TIMEOUT=${PARLEY_READY_TIMEOUT:-90}
MINIO_USER=${MINIO_ACCESS_KEY:-parley}
MINIO_PASSWORD=${MINIO_SECRET_KEY:-parley-secret}

NAMES=(postgres temporal temporal-ui minio1 minio2 minio3 minio4 front carrier voice-provider mailcatcher api1 api2 worker1 worker2)

say() { echo "cluster: $*" >&2; }
die() {
	say "$*"
	exit 1
}

usage() {
	sed -n '2,9p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

is_root() { ((EUID == 0)); }

# setting NAME DEFAULT: NAME from the environment, else as the last `up`
# wrote it into DIR/env (so `scripts/cluster.sh start minio3` by hand keeps
# the cluster's settings), else DEFAULT.
setting() {
	if [[ -n ${!1:-} ]]; then
		echo "${!1}"
		return
	fi
	local v
	v=$(sed -n "s/^export $1=//p" "$DIR/env" 2>/dev/null | tail -n 1)
	v=${v#\'}
	echo "${v%\'}" | grep . || echo "$2"
}

mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
# The shards of an existing cluster, unless asked for (then checked).
SHARDS=${PARLEY_CLUSTER_HISTORY_SHARDS:-$(cat "$DIR/temporal/shards" 2>/dev/null || echo 4)}
LOGS=$DIR/logs
RUN=$DIR/run
mkdir -p "$LOGS" "$RUN"
# PostgreSQL runs as user postgres when we are root and must reach its data.
if is_root; then chmod 755 "$DIR"; fi

# ---- ports --------------------------------------------------------------------

# The ports, by name. Temporal's server needs one gRPC and one membership
# port per service (frontend, history, matching, worker) plus its HTTP API.
PORT_NAMES=(pg temporal temporal_http temporal_history temporal_matching temporal_worker
	temporal_frontend_member temporal_history_member temporal_matching_member temporal_worker_member
	temporal_metrics temporal_ui minio1 minio2 minio3 minio4 minio_console s3 api api1 api2
	carrier voice mail_smtp mail_http)

port_in_use() { timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; }

declare -A PORT
load_ports() {
	local name var value taken=" "
	if [[ -f $DIR/ports ]]; then
		while IFS='=' read -r name value; do
			[[ -n $name && $value =~ ^[0-9]+$ ]] && PORT[$name]=$value
		done <"$DIR/ports"
	fi
	for name in "${PORT_NAMES[@]}"; do
		var=PARLEY_CLUSTER_${name^^}_PORT
		if [[ -n ${!var:-} ]]; then
			[[ ${!var} =~ ^[0-9]+$ ]] && ((${!var} >= 1 && ${!var} <= 65535)) || die "invalid port $var=${!var}"
			PORT[$name]=${!var}
		fi
	done
	for name in "${PORT_NAMES[@]}"; do
		[[ -n ${PORT[$name]:-} ]] && taken+="${PORT[$name]} "
	done
	for name in "${PORT_NAMES[@]}"; do
		[[ -n ${PORT[$name]:-} ]] && continue
		local p tries=0
		while :; do
			# Below 32768: Linux's ephemeral range starts there (no clash
			# with outgoing connections), and Temporal's SQL schema keeps
			# membership ports in a smallint.
			p=$((20000 + RANDOM % 12768))
			((tries++ < 200)) || die "no free port found for $name"
			[[ $taken == *" $p "* ]] && continue
			port_in_use "$p" && continue
			break
		done
		PORT[$name]=$p
		taken+="$p "
	done
	# Written only when it changes (several cluster.sh may run at once: the
	# chaos run stops and starts processes concurrently).
	local content
	content=$(for name in "${PORT_NAMES[@]}"; do echo "$name=${PORT[$name]}"; done)
	if [[ ! -f $DIR/ports || $(<"$DIR/ports") != "$content" ]]; then
		echo "$content" >"$DIR/ports.tmp.$$"
		mv -f "$DIR/ports.tmp.$$" "$DIR/ports"
	fi
}

# ---- processes ----------------------------------------------------------------

# Each process we start runs under `exec -a "<program> [cluster DIR NAME]"`,
# so its command line names it: a stale pid file never makes us signal a
# process that reused the pid.
marker() { echo "[cluster $DIR $1]"; }

proc_matches() { # proc_matches PID TEXT
	local pid=$1 text=$2 cmdline
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	cmdline=$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline") || return 1
	[[ -n $cmdline && $cmdline == *"$text"* ]]
}

pid_of() { # pid_of NAME: the live pid, or nothing
	local name=$1 pid match
	if [[ $name == postgres ]]; then
		pid=$(head -n 1 "$DIR/postgres/postmaster.pid" 2>/dev/null || true)
		match=$DIR/postgres
	elif [[ $name == front ]]; then
		# nginx rewrites its command line while it starts ("nginx: master
		# process ..."), so a read at that moment may show only part of it.
		pid=$(cat "$RUN/front.pid" 2>/dev/null || true)
		match=nginx
	else
		pid=$(cat "$RUN/$name.pid" 2>/dev/null || true)
		match=$(marker "$name")
	fi
	if proc_matches "$pid" "$match"; then echo "$pid"; fi
}

running() { [[ -n $(pid_of "$1") ]]; }

log_mark() { echo "==== cluster.sh start $(date -u +%FT%TZ) ====" >>"$LOGS/$1.log"; }

tail_log() {
	echo "---- last 30 lines of $LOGS/$1.log ----" >&2
	tail -n 30 "$LOGS/$1.log" >&2 || true
	echo "----" >&2
}

# spawn NAME ENV... -- PROGRAM ARGS...: start one process in its own session,
# its output appended to logs/NAME.log, its pid in run/NAME.pid.
spawn() {
	local name=$1 envs=()
	shift
	while [[ $1 != -- ]]; do
		envs+=("$1")
		shift
	done
	shift
	log_mark "$name"
	# shellcheck disable=SC2016 # expanded by the inner shell
	env "${envs[@]}" setsid bash -c 'name=$1; shift; exec -a "$1 $name" "$@"' _ "$(marker "$name")" "$@" \
		</dev/null >>"$LOGS/$name.log" 2>&1 9>&- &
	echo $! >"$RUN/$name.pid"
}

# started_alive NAME: the process just started for NAME still exists (and
# is no zombie). Unlike running, it does not read the command line, which
# is briefly empty while a process execs (setsid, then bash, then the
# program): read at that moment, a live process looked dead.
started_alive() {
	local pid state
	if [[ $1 == postgres ]]; then
		pid=$(head -n 1 "$DIR/postgres/postmaster.pid" 2>/dev/null || true)
	else
		pid=$(cat "$RUN/$1.pid" 2>/dev/null || true)
	fi
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	state=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | awk '{ print $1 }') || return 1
	[[ -n $state && $state != Z ]]
}

# wait_until NAME CHECK...: poll CHECK until it succeeds; fail when NAME dies
# or READY_TIMEOUT passes.
wait_until() {
	local name=$1 deadline=$((SECONDS + READY_TIMEOUT))
	shift
	until "$@" >/dev/null 2>&1; do
		started_alive "$name" || {
			tail_log "$name"
			die "$name exited during start-up (log: $LOGS/$name.log)"
		}
		((SECONDS < deadline)) || {
			tail_log "$name"
			die "$name not ready after ${READY_TIMEOUT}s"
		}
		sleep 0.3
	done
}

# signal_and_wait NAME SIGNAL: signal NAME's process and wait (15 s, then
# SIGKILL) until it is gone.
signal_and_wait() {
	local name=$1 sig=$2 pid i
	pid=$(pid_of "$name")
	[[ -n $pid ]] || return 0
	kill "-$sig" "$pid" 2>/dev/null || true
	for ((i = 0; i < 150; i++)); do
		running "$name" || break
		sleep 0.1
	done
	if running "$name"; then
		say "$name (pid $pid) did not stop in 15 s; killing it"
		kill -KILL "$pid" 2>/dev/null || true
		for ((i = 0; i < 50; i++)); do
			running "$name" || break
			sleep 0.1
		done
	fi
}

# ---- env ------------------------------------------------------------------------

quote() { printf "'%s'" "${1//\'/\'\\\'\'}"; }

secret() { # secret NAME BYTES: a random hex value kept in DIR/secrets/NAME
	mkdir -p "$DIR/secrets"
	if [[ ! -s $DIR/secrets/$1 ]]; then
		(umask 077 && od -An -tx1 -N"$2" /dev/urandom | tr -d ' \n' >"$DIR/secrets/$1")
	fi
	cat "$DIR/secrets/$1"
}

# write_env: DIR/env, what every Parley process (and an operator's shell)
# reads. The API and the workers see the cluster only through the fronts:
# MinIO through nginx, the API's public origin through nginx.
write_env() {
	local tmp=$DIR/env.tmp
	if [[ ! -s $DIR/secrets/vapid-keys ]]; then
		mkdir -p "$DIR/secrets"
		(umask 077 && "$PARLEY" vapid generate >"$DIR/secrets/vapid-keys")
	fi
	{
		echo "# Written by scripts/cluster.sh; source it: . $DIR/env"
		echo "export DATABASE_URL=$(quote "postgres://postgres@127.0.0.1:${PORT[pg]}/parley?sslmode=disable")"
		echo "export TEMPORAL_ADDRESS=127.0.0.1:${PORT[temporal]}"
		echo "export TEMPORAL_NAMESPACE=default"
		echo "export MINIO_ENDPOINT=127.0.0.1:${PORT[s3]}"
		echo "export MINIO_ACCESS_KEY=$(quote "$MINIO_USER")"
		echo "export MINIO_SECRET_KEY=$(quote "$MINIO_PASSWORD")"
		echo "export MINIO_BUCKET=parley"
		echo "export MINIO_USE_SSL=false"
		echo "export PARLEY_BASE_URL=http://127.0.0.1:${PORT[api]}"
		echo "export PARLEY_MEDIA_SECRET=$(secret media-secret 32)"
		sed 's/^/export /' "$DIR/secrets/vapid-keys"
		echo "export PARLEY_VAPID_SUBJECT=mailto:$DEV_EMAIL"
		echo "export PARLEY_TWILIO_ACCOUNT_SID=AC$(secret carrier-sid 16)"
		echo "export PARLEY_TWILIO_AUTH_TOKEN=$(secret carrier-token 16)"
		echo "export PARLEY_CARRIER_ADDR=127.0.0.1:${PORT[carrier]}"
		echo "export PARLEY_CARRIER_STATE_DIR=$DIR/carrier"
		echo "export PARLEY_TWILIO_BASE_URL=http://127.0.0.1:${PORT[carrier]}"
		echo "export PARLEY_NOTIFY_SMS_FROM=+15005550006"
		echo "export PARLEY_ELEVENLABS_API_KEY=dev_$(secret voice-key 16)"
		echo "export PARLEY_ELEVENLABS_WEBHOOK_SECRET=wsec_$(secret voice-webhook-secret 32)"
		echo "export PARLEY_VOICE_PROVIDER_ADDR=127.0.0.1:${PORT[voice]}"
		echo "export PARLEY_ELEVENLABS_BASE_URL=http://127.0.0.1:${PORT[voice]}"
		echo "export PARLEY_MAILCATCHER_SMTP_ADDR=127.0.0.1:${PORT[mail_smtp]}"
		echo "export PARLEY_MAILCATCHER_HTTP_ADDR=127.0.0.1:${PORT[mail_http]}"
		echo "export PARLEY_SMTP_URL=smtp://127.0.0.1:${PORT[mail_smtp]}"
		echo "export PARLEY_MAIL_FROM='Parley <no-reply@parley.local>'"
		# What the chaos run and the benchmarks read: the processes' own ports.
		echo "export PARLEY_CLUSTER_DIR=$(quote "$DIR")"
		echo "export PARLEY_CLUSTER_API1=http://127.0.0.1:${PORT[api1]}"
		echo "export PARLEY_CLUSTER_API2=http://127.0.0.1:${PORT[api2]}"
		echo "export PARLEY_CLUSTER_STALE_UPLOADS_EXPIRY=$STALE_UPLOADS_EXPIRY"
		echo "export PARLEY_CLUSTER_STALE_UPLOADS_CLEANUP=$STALE_UPLOADS_CLEANUP"
		# Operator extras passed through unchanged (e.g. PARLEY_LOG_LEVEL,
		# PARLEY_URL_ALLOW_CIDRS for webhooks to loopback receivers).
		local v
		for v in PARLEY_LOG_LEVEL PARLEY_URL_ALLOW_CIDRS PARLEY_WEBHOOK_RETRIES PARLEY_SMS_REFRESH_INTERVAL \
			PARLEY_SMS_DAILY_QUOTAS PARLEY_SLOTS_CPU PARLEY_SLOTS_JOBS PARLEY_SPLIT_ABOVE PARLEY_CHUNK_LENGTH; do
			[[ -n ${!v:-} ]] && echo "export $v=$(quote "${!v}")"
		done
	} >"$tmp"
	chmod 600 "$tmp"
	mv -f "$tmp" "$DIR/env"
}

# ---- PostgreSQL -------------------------------------------------------------------

pg_ready() { pg_isready -q -h 127.0.0.1 -p "${PORT[pg]}" -U postgres; }

# PostgreSQL's default of 100 connections is less than the cluster's pools
# can open: Temporal's server (maxConns 20 + 10 per datastore, per service),
# and 32 for each Parley process. At 100, "sorry, too many clients" refused
# Parley's carrier callbacks under the chaos run's load.
PG_MAX_CONNECTIONS=${PARLEY_PG_MAX_CONNECTIONS:-400}

start_postgres() {
	PARLEY_PG_PORT=${PORT[pg]} PARLEY_READY_TIMEOUT=$READY_TIMEOUT PARLEY_PG_MAX_CONNECTIONS=$PG_MAX_CONNECTIONS \
		"$ROOT/scripts/services.sh" postgres-start "$DIR" 9>&-
}

stop_postgres() { "$ROOT/scripts/services.sh" postgres-stop "$DIR" 9>&-; }

kill_postgres() {
	# A crash: the postmaster and its backends die at once, and the next
	# start runs crash recovery from the WAL.
	local pid
	pid=$(pid_of postgres)
	[[ -n $pid ]] || return 0
	pkill -KILL -P "$pid" 2>/dev/null || true
	kill -KILL "$pid" 2>/dev/null || true
	while running postgres; do sleep 0.1; done
}

# ---- Temporal ---------------------------------------------------------------------

# Temporal's schema and config come from scripts/cluster-temporal.sh, which
# the Temporal image of docker-compose.yml runs too: one source for both.
temporal_env() {
	env TEMPORAL_SQL_TOOL="$BIN/temporal-sql-tool" TEMPORAL_PG_HOST=127.0.0.1 TEMPORAL_PG_PORT=${PORT[pg]} \
		TEMPORAL_PG_USER=postgres TEMPORAL_PG_PASSWORD= TEMPORAL_SHARDS=$SHARDS \
		TEMPORAL_BIND_IP=127.0.0.1 TEMPORAL_BROADCAST_ADDRESS=127.0.0.1 \
		TEMPORAL_FRONTEND_PORT=${PORT[temporal]} TEMPORAL_HTTP_PORT=${PORT[temporal_http]} \
		TEMPORAL_HISTORY_PORT=${PORT[temporal_history]} TEMPORAL_MATCHING_PORT=${PORT[temporal_matching]} \
		TEMPORAL_WORKER_PORT=${PORT[temporal_worker]} \
		TEMPORAL_FRONTEND_MEMBER_PORT=${PORT[temporal_frontend_member]} \
		TEMPORAL_HISTORY_MEMBER_PORT=${PORT[temporal_history_member]} \
		TEMPORAL_MATCHING_MEMBER_PORT=${PORT[temporal_matching_member]} \
		TEMPORAL_WORKER_MEMBER_PORT=${PORT[temporal_worker_member]} \
		TEMPORAL_METRICS_PORT=${PORT[temporal_metrics]} \
		"$@"
}

setup_temporal_schema() {
	[[ -x $BIN/temporal-sql-tool ]] || die "$BIN/temporal-sql-tool is missing; run: make cluster-tools"
	temporal_env "$ROOT/scripts/cluster-temporal.sh" schema >>"$LOGS/temporal-schema.log" 2>&1 ||
		die "Temporal's schema setup failed (log: $LOGS/temporal-schema.log)"
}

temporal_config() {
	if [[ -f $DIR/temporal/shards && $(<"$DIR/temporal/shards") != "$SHARDS" ]]; then
		die "Temporal's history shards are fixed at $(<"$DIR/temporal/shards") for $DIR; a different PARLEY_CLUSTER_HISTORY_SHARDS needs a new cluster directory"
	fi
	mkdir -p "$DIR/temporal"
	echo "$SHARDS" >"$DIR/temporal/shards"
	temporal_env "$ROOT/scripts/cluster-temporal.sh" config "$DIR/temporal/config" cluster
}

temporal_ready() {
	timeout 5 "$BIN/temporal" operator cluster health --address "127.0.0.1:${PORT[temporal]}" |
		grep -q SERVING
}

namespace_ready() {
	timeout 5 "$BIN/temporal" operator namespace describe --namespace default \
		--address "127.0.0.1:${PORT[temporal]}"
}

start_temporal() {
	[[ -x $BIN/temporal-server ]] || die "$BIN/temporal-server is missing; run: make cluster-tools"
	[[ -x $BIN/temporal ]] || die "$BIN/temporal is missing; run: make tools"
	running postgres || die "postgres is not running; start it first"
	setup_temporal_schema
	temporal_config
	spawn temporal -- "$BIN/temporal-server" --root "$DIR/temporal" --config config --env cluster \
		--allow-no-auth start
	wait_until temporal temporal_ready
	if ! namespace_ready >/dev/null 2>&1; then
		temporal_env TEMPORAL_CLI="$BIN/temporal" "$ROOT/scripts/cluster-temporal.sh" namespace \
			>>"$LOGS/temporal.log" 2>&1 || true
		wait_until temporal namespace_ready
	fi
}

start_temporal_ui() {
	[[ -x $BIN/temporal-ui-server ]] || {
		say "no $BIN/temporal-ui-server (make cluster-tools builds it); the CLI reads the same: bin/temporal workflow list"
		return 0
	}
	local c=$DIR/temporal-ui/config
	mkdir -p "$c"
	cat >"$c/cluster.yaml" <<-EOF
		# Written by scripts/cluster.sh.
		temporalGrpcAddress: 127.0.0.1:${PORT[temporal]}
		host: 127.0.0.1
		port: ${PORT[temporal_ui]}
		enableUi: true
		defaultNamespace: default
		notifyOnNewVersion: false
		refreshInterval: 1m
		cors:
		  cookieInsecure: true
		  allowOrigins:
		    - http://127.0.0.1:${PORT[temporal_ui]}
	EOF
	spawn temporal-ui -- "$BIN/temporal-ui-server" --root "$DIR/temporal-ui" --config config --env cluster start
	wait_until temporal-ui curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:${PORT[temporal_ui]}/"
}

# ---- MinIO ----------------------------------------------------------------------------

# A client's upload cut off mid-way (its API process killed) leaves an
# incomplete multipart upload that no S3 listing by prefix shows (MinIO lists
# multipart uploads of one exact key only); MinIO itself removes those older
# than this expiry, checking at this interval. MinIO's defaults: 24h and 6h.
STALE_UPLOADS_EXPIRY=$(setting PARLEY_CLUSTER_STALE_UPLOADS_EXPIRY 24h)
STALE_UPLOADS_CLEANUP=$(setting PARLEY_CLUSTER_STALE_UPLOADS_CLEANUP 6h)

# One deployment of four node processes, one drive each: MinIO's erasure
# coding gives a 4-drive set parity EC:2, so reads and writes keep working
# with any one node down (writes need 3 of 4 drives).
minio_endpoints() {
	local i
	for i in 1 2 3 4; do echo "http://127.0.0.1:${PORT[minio$i]}$DIR/minio/node$i"; done
}

# minio_ready N: node N serves requests. Its liveness check answers long
# before that ("Server not initialized yet" for a second or more after a
# restart); its own view of the cluster's health is 200 only once it has
# joined the others with write quorum.
minio_ready() { # minio_ready N
	curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:${PORT[minio$1]}/minio/health/cluster"
}

minio_cluster_ready() {
	curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:${PORT[s3]}/minio/health/cluster"
}

start_minio() { # start_minio N
	local n=$1 console=() endpoints
	[[ -x $BIN/minio ]] || die "$BIN/minio is missing; run: make tools"
	mkdir -p "$DIR/minio/node$n"
	mapfile -t endpoints < <(minio_endpoints)
	# Every node serves the console (MinIO wants the same MINIO_* settings
	# on all nodes); node 1's is on a known port, the others' on ports the
	# system picks.
	if ((n == 1)); then
		console=(--console-address "127.0.0.1:${PORT[minio_console]}")
	fi
	# Inside a container (/.dockerenv) MinIO waits for loopback node
	# addresses to "resolve to a valid IP", which they never do;
	# _MINIO_SERVER_LOCAL names this node's own endpoint so it needs no
	# resolving (MinIO reads it only in containers). MINIO_CI_CD lets the
	# four drives share the root filesystem, which a distributed MinIO
	# otherwise refuses (in production each node has drives of its own).
	# The nodes refuse each other unless their MINIO_* settings are the
	# same: none of the caller's (a shell that sourced .cluster/env has
	# MINIO_ENDPOINT, MINIO_BUCKET, ... for Parley) reaches them.
	local unset=() v
	for v in $(compgen -e); do
		[[ $v == MINIO_* ]] && unset+=(-u "$v")
	done
	spawn "minio$n" "${unset[@]}" MINIO_ROOT_USER="$MINIO_USER" MINIO_ROOT_PASSWORD="$MINIO_PASSWORD" \
		_MINIO_SERVER_LOCAL="127.0.0.1:${PORT[minio$n]}" MINIO_CI_CD=on \
		MINIO_API_STALE_UPLOADS_EXPIRY="$STALE_UPLOADS_EXPIRY" \
		MINIO_API_STALE_UPLOADS_CLEANUP_INTERVAL="$STALE_UPLOADS_CLEANUP" \
		MINIO_BROWSER=on MINIO_UPDATE=off -- \
		"$BIN/minio" server --address "127.0.0.1:${PORT[minio$n]}" "${console[@]}" "${endpoints[@]}"
}

# ---- the front (nginx) ------------------------------------------------------------

# nginx, as an operator would put it before MinIO nodes and API processes:
# round robin; a request a server refuses (or, for MinIO, answers 502/503/504)
# goes to the next one, and a MinIO node that failed is skipped for 10 s
# (MinIO's nodes are all equal: any node serves any object). Bodies stream through both ways
# (no buffering), so a 500 MB upload never lands on nginx's disk.
front_config() {
	local c=$DIR/front i
	mkdir -p "$c/tmp"
	{
		if is_root; then echo "user root;"; fi
		cat <<-EOF
			# Written by scripts/cluster.sh from .cluster/ports; edits are overwritten.
			worker_processes 1;
			pid $RUN/front.nginx.pid;
			error_log $LOGS/front.log warn;
			events { worker_connections 1024; }
			http {
			  # Which node answered what: the first place to look when a
			  # request through the front failed.
			  log_format front '\$time_iso8601 \$status \$request_method \$uri \$upstream_addr \$upstream_status \$request_time';
			  access_log $LOGS/front-access.log front buffer=64k flush=1s;
			  client_body_temp_path $c/tmp/body;
			  proxy_temp_path $c/tmp/proxy;
			  fastcgi_temp_path $c/tmp/fastcgi;
			  uwsgi_temp_path $c/tmp/uwsgi;
			  scgi_temp_path $c/tmp/scgi;
			  client_max_body_size 0;
			  proxy_http_version 1.1;
			  proxy_request_buffering off;
			  proxy_buffering off;
			  proxy_connect_timeout 2s;
			  proxy_read_timeout 300s;
			  proxy_send_timeout 300s;
			  proxy_next_upstream error timeout http_502 http_503 http_504;
			  proxy_next_upstream_tries 4;
			  upstream minio {
		EOF
		for i in 1 2 3 4; do echo "    server 127.0.0.1:${PORT[minio$i]} max_fails=1 fail_timeout=10s;"; done
		cat <<-EOF
			    keepalive 32;
			  }
			  # max_fails=0: an API process is never marked down, a refused
			  # connection just moves the request to the other one. Marked
			  # down for 10 s, both processes restarted one after the other
			  # left nginx with "no live upstreams" (502) while both were up.
			  upstream parley_api {
			    server 127.0.0.1:${PORT[api1]} max_fails=0;
			    server 127.0.0.1:${PORT[api2]} max_fails=0;
			    keepalive 32;
			  }
			  server {
			    listen 127.0.0.1:${PORT[s3]};
			    # S3 signs the Host header: pass the client's unchanged.
			    location / {
			      proxy_set_header Host \$http_host;
			      proxy_set_header Connection "";
			      proxy_pass http://minio;
			    }
			  }
			  server {
			    listen 127.0.0.1:${PORT[api]};
			    location / {
			      proxy_set_header Host \$http_host;
			      proxy_set_header X-Forwarded-For \$remote_addr;
			      proxy_set_header Connection "";
			      proxy_pass http://parley_api;
			    }
			  }
			}
		EOF
	} >"$c/nginx.conf"
}

ensure_nginx() {
	command -v nginx >/dev/null && return 0
	if is_root && command -v apt-get >/dev/null; then
		say "installing nginx (apt-get; its service is not started, we run our own)"
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive RUNLEVEL=1 \
			apt-get install -y -qq --no-install-recommends nginx >/dev/null
	fi
	command -v nginx >/dev/null || die "nginx is missing; run: sudo apt-get install -y nginx"
}

start_front() {
	ensure_nginx
	front_config
	nginx -t -q -p "$DIR/front" -c "$DIR/front/nginx.conf" 2>>"$LOGS/front.log" ||
		die "nginx rejected $DIR/front/nginx.conf (log: $LOGS/front.log)"
	log_mark front
	# Foreground master (daemon off) in its own session; its title keeps the
	# config path, which is how pid_of recognises it.
	setsid nginx -p "$DIR/front" -c "$DIR/front/nginx.conf" -g 'daemon off;' \
		</dev/null >>"$LOGS/front.log" 2>&1 9>&- &
	echo $! >"$RUN/front.pid"
	wait_until front port_in_use "${PORT[s3]}"
}

# ---- Parley and the stand-ins -----------------------------------------------------

parley_env() { # run what follows with DIR/env loaded
	# shellcheck source=/dev/null
	(. "$DIR/env" && "$@")
}

http_ok() { curl -fsS -o /dev/null --max-time 2 "$1"; }

# worker_polling NAME: the worker's log, since its last start, says it polls
# the job queue.
worker_polling() {
	awk '/^==== cluster.sh start/ { seen = 0 } /"msg":"Started Worker"/ && /"TaskQueue":"parley-jobs"/ { seen = 1 }
		END { exit !seen }' "$LOGS/$1.log"
}

start_parley() { # start_parley NAME
	local name=$1 addr
	[[ -x $PARLEY ]] || die "$PARLEY is missing; run: make build"
	case $name in
	api1 | api2)
		addr=127.0.0.1:${PORT[$name]}
		parley_env spawn "$name" PARLEY_HTTP_ADDR="$addr" -- "$PARLEY" api
		wait_until "$name" http_ok "http://$addr/api/v1/health"
		;;
	worker1 | worker2)
		# Two workers on one machine share its cores: each takes half the
		# CPU slots unless the operator says otherwise.
		local cpu=${PARLEY_SLOTS_CPU:-$((($(nproc) + 1) / 2))}
		parley_env spawn "$name" PARLEY_SLOTS_CPU="$cpu" -- "$PARLEY" worker
		wait_until "$name" worker_polling "$name"
		;;
	carrier)
		parley_env spawn carrier -- "$PARLEY" carrier
		wait_until carrier port_in_use "${PORT[carrier]}"
		;;
	voice-provider)
		parley_env spawn voice-provider -- "$PARLEY" voice-provider
		wait_until voice-provider port_in_use "${PORT[voice]}"
		;;
	mailcatcher)
		parley_env spawn mailcatcher -- "$PARLEY" mailcatcher
		wait_until mailcatcher port_in_use "${PORT[mail_smtp]}"
		;;
	esac
}

# ---- one process by name -------------------------------------------------------------

start_one() {
	local name=$1
	if running "$name"; then return 0; fi
	case $name in
	postgres) start_postgres ;;
	temporal) start_temporal ;;
	temporal-ui) start_temporal_ui ;;
	minio[1-4])
		start_minio "${name#minio}"
		wait_until "$name" minio_ready "${name#minio}"
		;;
	front) start_front ;;
	*) start_parley "$name" ;;
	esac
	say "started $name"
}

stop_one() {
	case $1 in
	postgres) stop_postgres ;;
	front) signal_and_wait front QUIT ;;
	*) signal_and_wait "$1" TERM ;;
	esac
}

kill_one() {
	case $1 in
	postgres) kill_postgres ;;
	*)
		local pid
		pid=$(pid_of "$1")
		[[ -n $pid ]] || return 0
		kill -KILL "$pid" 2>/dev/null || true
		while running "$1"; do sleep 0.05; done
		;;
	esac
	say "killed $1"
}

known() {
	local n
	for n in "${NAMES[@]}"; do [[ $n == "$1" ]] && return 0; done
	die "unknown process '$1' (one of: ${NAMES[*]})"
}

# ---- up / down -------------------------------------------------------------------

bootstrap() {
	local out key_file=$DIR/dev-api-key
	parley_env "$PARLEY" migrate up >>"$LOGS/migrate.log" 2>&1 || {
		tail_log migrate
		die "parley migrate up failed"
	}
	out=$(parley_env "$PARLEY" admin bootstrap-dev --email "$DEV_EMAIL" 2>>"$LOGS/migrate.log")
	if [[ $out != *alreadyBootstrapped* ]]; then
		local secret
		secret=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["secret"])' <<<"$out" 2>/dev/null ||
			sed -n 's/.*"secret"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' <<<"$out" | head -n 1)
		[[ -n $secret ]] || die "unexpected output from parley admin bootstrap-dev: $out"
		(umask 077 && printf '%s\n' "$secret" >"$key_file")
	fi
}

up() {
	local n
	exec 9>"$DIR/.cluster.lock"
	flock -n 9 || die "another cluster.sh up is running for $DIR"
	write_env
	for n in postgres temporal temporal-ui minio1 minio2 minio3 minio4; do
		if [[ $n == minio1 ]]; then
			# The four nodes wait for each other: start them all, then wait.
			for n in minio1 minio2 minio3 minio4; do running "$n" || start_minio "${n#minio}"; done
			for n in minio1 minio2 minio3 minio4; do wait_until "$n" minio_ready "${n#minio}"; done
			say "minio: four nodes up"
			continue
		fi
		[[ $n == minio[2-4] ]] && continue
		start_one "$n"
	done
	start_one front
	wait_until minio1 minio_cluster_ready
	start_one carrier
	start_one voice-provider
	start_one mailcatcher
	bootstrap
	for n in api1 api2 worker1 worker2; do start_one "$n"; done
	print_summary
}

down() {
	local i
	for ((i = ${#NAMES[@]} - 1; i >= 0; i--)); do
		if running "${NAMES[i]}"; then
			stop_one "${NAMES[i]}"
			say "stopped ${NAMES[i]}"
		fi
	done
}

status() {
	local n pid rc=0
	for n in "${NAMES[@]}"; do
		pid=$(pid_of "$n")
		if [[ -n $pid ]]; then
			printf '%-15s running (pid %s)\n' "$n" "$pid"
		else
			printf '%-15s stopped\n' "$n"
			rc=1
		fi
	done
	return "$rc"
}

print_summary() {
	local key=$DIR/dev-api-key
	cat >&2 <<-EOF

		cluster: up, state under $DIR (logs in $DIR/logs)

		  API (nginx in front of both)  http://127.0.0.1:${PORT[api]}/api/v1
		  API process 1 / 2             http://127.0.0.1:${PORT[api1]}  http://127.0.0.1:${PORT[api2]}
		  workers                       worker1, worker2 (parley worker)
		  Temporal (gRPC)               127.0.0.1:${PORT[temporal]}  (PostgreSQL persistence + SQL visibility, ${SHARDS} history shards)
		  Temporal web UI               $(if [[ -x $BIN/temporal-ui-server ]]; then echo "http://127.0.0.1:${PORT[temporal_ui]}"; else echo "not built (bin/temporal --address 127.0.0.1:${PORT[temporal]} workflow list)"; fi)
		  MinIO S3 (nginx, 4 nodes)     127.0.0.1:${PORT[s3]}  nodes :${PORT[minio1]} :${PORT[minio2]} :${PORT[minio3]} :${PORT[minio4]}
		  MinIO console                 http://127.0.0.1:${PORT[minio_console]} ($MINIO_USER / $MINIO_PASSWORD)
		  PostgreSQL                    127.0.0.1:${PORT[pg]} (databases parley, temporal, temporal_visibility)
		  SMS carrier (stand-in)        http://127.0.0.1:${PORT[carrier]}
		  voice provider (stand-in)     http://127.0.0.1:${PORT[voice]}
		  mail inbox (stand-in)         http://127.0.0.1:${PORT[mail_http]}/

		  dev key ($DEV_EMAIL)          $(cat "$key" 2>/dev/null || echo "(printed when first created)")   also in $key
		  try:   curl -H "Authorization: Bearer \$(cat $key)" http://127.0.0.1:${PORT[api]}/api/v1/profile
		  env:   . $DIR/env   (then bin/temporal --address \$TEMPORAL_ADDRESS workflow list)
		  one process:  scripts/cluster.sh status | stop NAME | start NAME | kill NAME
		  stop:  make cluster-stop   (data stays in $DIR; rm -rf it for a fresh cluster)

	EOF
}

# ---- main ----------------------------------------------------------------------------

(($# >= 1)) || usage
load_ports
case $1 in
up) up ;;
down) down ;;
status) status ;;
names) printf '%s\n' "${NAMES[@]}" ;;
start | stop | kill | restart)
	(($# == 2)) || usage
	known "$2"
	case $1 in
	start)
		[[ -f $DIR/env ]] || write_env
		start_one "$2"
		;;
	stop) stop_one "$2" && say "stopped $2" ;;
	kill) kill_one "$2" ;;
	restart)
		stop_one "$2"
		start_one "$2"
		;;
	esac
	;;
*) usage ;;
esac

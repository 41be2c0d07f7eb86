#!/usr/bin/env bash
# cluster-temporal.sh: Temporal's own server on PostgreSQL, the parts that
# `make cluster` (scripts/cluster.sh) and docker-compose.yml's Temporal image
# share, so the two never drift.
#
#   cluster-temporal.sh schema            create Temporal's two databases if missing and bring
#                                         them to the schema embedded in temporal-sql-tool
#                                         (the server's own version); again changes nothing
#   cluster-temporal.sh config DIR ENV    write DIR/ENV.yaml (the server's config, for
#                                         `temporal-server --config DIR --env ENV start`) and
#                                         DIR/dynamicconfig.yaml
#   cluster-temporal.sh namespace         register namespace `default` (72 h retention) if missing
#   cluster-temporal.sh serve             schema, config, then exec the server (the compose image)
#
# Settings (environment; defaults are the container's):
#   TEMPORAL_PG_HOST (postgres) TEMPORAL_PG_PORT (5432) TEMPORAL_PG_USER (postgres)
#   TEMPORAL_PG_PASSWORD ("") TEMPORAL_SHARDS (4; fixed once the schema exists)
#   TEMPORAL_BIND_IP (0.0.0.0) TEMPORAL_BROADCAST_ADDRESS (this host's first address)
#   TEMPORAL_FRONTEND_PORT (7233) TEMPORAL_HTTP_PORT (7243) TEMPORAL_HISTORY_PORT (7234)
#   TEMPORAL_MATCHING_PORT (7235) TEMPORAL_WORKER_PORT (7239) TEMPORAL_*_MEMBER_PORT
#   (6933, 6934, 6935, 6939: frontend, history, matching, worker) TEMPORAL_METRICS_PORT (8000)
#   TEMPORAL_SQL_TOOL (temporal-sql-tool) TEMPORAL_SERVER (temporal-server) TEMPORAL_CLI (temporal)
#
# Facts from the server's own config/development-postgres12.yaml,
# docker/config_template.yaml and tools/sql/README.md (v1.29.1).
set -euo pipefail

PG_HOST=${TEMPORAL_PG_HOST:-postgres}
PG_PORT=${TEMPORAL_PG_PORT:-5432}
PG_USER=${TEMPORAL_PG_USER:-postgres}
PG_PASSWORD=${TEMPORAL_PG_PASSWORD:-}
SHARDS=${TEMPORAL_SHARDS:-4}
BIND_IP=${TEMPORAL_BIND_IP:-0.0.0.0}
FRONTEND_PORT=${TEMPORAL_FRONTEND_PORT:-7233}
SQL_TOOL=${TEMPORAL_SQL_TOOL:-temporal-sql-tool}
SERVER=${TEMPORAL_SERVER:-temporal-server}
CLI=${TEMPORAL_CLI:-temporal}

broadcast_address() {
	if [[ -n ${TEMPORAL_BROADCAST_ADDRESS:-} ]]; then
		echo "$TEMPORAL_BROADCAST_ADDRESS"
	else
		hostname -i | awk '{ print $1 }'
	fi
}

sql_tool() { # sql_tool DB ARGS...
	local db=$1
	shift
	SQL_PASSWORD=$PG_PASSWORD "$SQL_TOOL" --plugin postgres12 --ep "$PG_HOST" -p "$PG_PORT" -u "$PG_USER" \
		--db "$db" "$@"
}

psql_at() { # psql_at DB QUERY: one value
	PGPASSWORD=$PG_PASSWORD psql -X -q -h "$PG_HOST" -p "$PG_PORT" -U "$PG_USER" -d "$1" -tAc "$2"
}

schema() {
	local db name
	for db in temporal temporal_visibility; do
		name=postgresql/v12/temporal
		[[ $db == temporal_visibility ]] && name=postgresql/v12/visibility
		if [[ $(psql_at postgres "SELECT 1 FROM pg_database WHERE datname = '$db'") != 1 ]]; then
			sql_tool "$db" create-database
		fi
		if [[ $(psql_at "$db" "SELECT 1 FROM information_schema.tables WHERE table_name = 'schema_version'") != 1 ]]; then
			sql_tool "$db" setup-schema -v 0.0
		fi
		sql_tool "$db" update-schema --schema-name "$name"
	done
}

config() { # config DIR ENV
	local dir=$1 env=$2 broadcast
	broadcast=$(broadcast_address)
	mkdir -p "$dir"
	cat >"$dir/dynamicconfig.yaml" <<-'EOF'
		# Temporal dynamic config (read every 10 s). Written by scripts/cluster-temporal.sh.
		limit.maxIDLength:
		  - value: 255
		    constraints: {}
	EOF
	cat >"$dir/$env.yaml" <<-EOF
		# Written by scripts/cluster-temporal.sh; edits are overwritten.
		log:
		  stdout: true
		  level: warn
		persistence:
		  defaultStore: postgres-default
		  visibilityStore: postgres-visibility
		  numHistoryShards: $SHARDS
		  datastores:
		    postgres-default:
		      sql:
		        pluginName: postgres12
		        databaseName: temporal
		        connectAddr: $PG_HOST:$PG_PORT
		        connectProtocol: tcp
		        user: $PG_USER
		        password: "$PG_PASSWORD"
		        maxConns: 20
		        maxIdleConns: 20
		        maxConnLifetime: 1h
		    postgres-visibility:
		      sql:
		        pluginName: postgres12
		        databaseName: temporal_visibility
		        connectAddr: $PG_HOST:$PG_PORT
		        connectProtocol: tcp
		        user: $PG_USER
		        password: "$PG_PASSWORD"
		        maxConns: 10
		        maxIdleConns: 10
		        maxConnLifetime: 1h
		global:
		  membership:
		    maxJoinDuration: 30s
		    broadcastAddress: $broadcast
		  metrics:
		    prometheus:
		      framework: tally
		      timerType: histogram
		      listenAddress: $BIND_IP:${TEMPORAL_METRICS_PORT:-8000}
		services:
		  frontend:
		    rpc:
		      grpcPort: $FRONTEND_PORT
		      membershipPort: ${TEMPORAL_FRONTEND_MEMBER_PORT:-6933}
		      bindOnIP: $BIND_IP
		      httpPort: ${TEMPORAL_HTTP_PORT:-7243}
		  history:
		    rpc:
		      grpcPort: ${TEMPORAL_HISTORY_PORT:-7234}
		      membershipPort: ${TEMPORAL_HISTORY_MEMBER_PORT:-6934}
		      bindOnIP: $BIND_IP
		  matching:
		    rpc:
		      grpcPort: ${TEMPORAL_MATCHING_PORT:-7235}
		      membershipPort: ${TEMPORAL_MATCHING_MEMBER_PORT:-6935}
		      bindOnIP: $BIND_IP
		  worker:
		    rpc:
		      grpcPort: ${TEMPORAL_WORKER_PORT:-7239}
		      membershipPort: ${TEMPORAL_WORKER_MEMBER_PORT:-6939}
		      bindOnIP: $BIND_IP
		clusterMetadata:
		  enableGlobalNamespace: false
		  failoverVersionIncrement: 10
		  masterClusterName: active
		  currentClusterName: active
		  clusterInformation:
		    active:
		      enabled: true
		      initialFailoverVersion: 1
		      rpcName: frontend
		      rpcAddress: $broadcast:$FRONTEND_PORT
		      httpAddress: $broadcast:${TEMPORAL_HTTP_PORT:-7243}
		dcRedirectionPolicy:
		  policy: noop
		archival:
		  history:
		    state: disabled
		  visibility:
		    state: disabled
		namespaceDefaults:
		  archival:
		    history:
		      state: disabled
		    visibility:
		      state: disabled
		dynamicConfigClient:
		  filepath: $dir/dynamicconfig.yaml
		  pollInterval: 10s
	EOF
}

namespace() {
	local addr
	addr=$(broadcast_address):$FRONTEND_PORT
	if ! "$CLI" operator namespace describe --namespace default --address "$addr" >/dev/null 2>&1; then
		"$CLI" operator namespace create --namespace default --retention 72h --address "$addr"
	fi
}

case ${1:-} in
schema) schema ;;
config)
	(($# == 3)) || {
		echo "usage: $0 config DIR ENV" >&2
		exit 2
	}
	config "$2" "$3"
	;;
namespace) namespace ;;
serve)
	schema
	config /etc/temporal/config docker
	exec "$SERVER" --root / --config etc/temporal/config --env docker --allow-no-auth start
	;;
*)
	sed -n '2,27p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
	exit 2
	;;
esac

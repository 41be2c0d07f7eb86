#!/usr/bin/env bash
# cluster-chaos-short.sh: the short chaos run for CI (make chaos-short).
#
# A fresh cluster in a scratch directory (free ports, nothing shared with
# .cluster/), the chaos run with a 200-recipient batch, then the cluster
# stopped and removed however it ends. Extra arguments go to the chaos run.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
dir=$(mktemp -d "${TMPDIR:-/tmp}/parley-chaos.XXXXXX")
# PostgreSQL runs as user postgres when we are root and must reach it.
chmod 755 "$dir"
export PARLEY_CLUSTER_DIR=$dir
# shellcheck disable=SC2317 # invoked by trap
cleanup() {
	"$ROOT/scripts/cluster.sh" down >/dev/null 2>&1 || true
	rm -rf "$dir"
}
trap cleanup EXIT

# The settings make chaos uses (Makefile, CHAOS_ENV).
PARLEY_URL_ALLOW_CIDRS=127.0.0.1/32 PARLEY_SPLIT_ABOVE=30s PARLEY_CHUNK_LENGTH=15s \
	PARLEY_CLUSTER_STALE_UPLOADS_EXPIRY=2m PARLEY_CLUSTER_STALE_UPLOADS_CLEANUP=1m \
	PARLEY_SMS_REFRESH_INTERVAL=30s \
	"$ROOT/scripts/cluster.sh" up 2>"$dir/up.log" || {
	cat "$dir/up.log" >&2
	exit 1
}
go run ./cmd/chaos -batch 200 -upload-cleanup 4m -settle 10m "$@"

#!/usr/bin/env bash
# with-services.sh COMMAND [ARG...]
#
# Runs COMMAND against throwaway PostgreSQL, Temporal and MinIO instances on
# free ports in a private temporary directory, with their settings in the
# environment (DATABASE_URL, TEMPORAL_*, MINIO_*) and PARLEY_TEST_TOOLS_BIN. The services and the directory are removed
# however COMMAND ends; the exit status is COMMAND's.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

if (($# == 0)); then
	echo "usage: $0 COMMAND [ARG...]" >&2
	exit 2
fi

# free_ports N: N distinct TCP ports that nothing listens on right now,
# below the kernel's ephemeral range (ip_local_port_range, 32768 and up by
# default): a port from that range can be taken as the source port of an
# outgoing connection (Temporal's, say) between being picked here and the
# service binding it.
free_ports() {
	if command -v python3 >/dev/null; then
		python3 - "$1" <<'PY'
import random, socket, sys
socks = []
while len(socks) < int(sys.argv[1]):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", random.randrange(20000, 32000)))
    except OSError:
        s.close()
        continue
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
for s in socks:
    s.close()
PY
	else
		local ports=() p
		while ((${#ports[@]} < $1)); do
			p=$((20000 + RANDOM % 12000))
			[[ " ${ports[*]-} " == *" $p "* ]] && continue
			timeout 1 bash -c "exec 3<>/dev/tcp/127.0.0.1/$p" 2>/dev/null && continue
			ports+=("$p")
		done
		echo "${ports[*]}"
	fi
}

# Postgres runs as the postgres user when we are root, so the directory
# must sit under a path that user can traverse.
dir=$(mktemp -d "${PARLEY_TEST_TMPDIR:-/tmp}/parley-test.XXXXXX")
chmod 755 "$dir"

# shellcheck disable=SC2317 # invoked by trap
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	"$ROOT/scripts/services.sh" stop "$dir" || true
	rm -rf "$dir"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

read -r PARLEY_PG_PORT PARLEY_TEMPORAL_PORT PARLEY_TEMPORAL_UI_PORT \
	PARLEY_MINIO_PORT PARLEY_MINIO_CONSOLE_PORT < <(free_ports 5)
export PARLEY_PG_PORT PARLEY_TEMPORAL_PORT PARLEY_TEMPORAL_UI_PORT \
	PARLEY_MINIO_PORT PARLEY_MINIO_CONSOLE_PORT

# Never point tests at a database from the caller's environment: the
# integration tests truncate tables.
unset DATABASE_URL
PARLEY_NO_FSYNC=1 PARLEY_HEADLESS=1 "$ROOT/scripts/services.sh" start "$dir"

# shellcheck source=/dev/null
. "$dir/env"
export PARLEY_TEST_TOOLS_BIN=$ROOT/bin

rc=0
"$@" || rc=$?
exit "$rc"

#!/usr/bin/env bash
# dev-crash.sh [RECIPIENTS] [KILL_AFTER]: the crash of a whole `make dev`
# stack, by hand.
#
# Starts a private `make dev` (its own directory under /tmp and its own
# ports, so it never meets another stack), admits a batch of RECIPIENTS
# (default 1500) SMS to +1202555xxxx, SIGKILLs every process of the stack
# KILL_AFTER seconds (default 1.2) later (parley dev, the stand-ins, Temporal,
# MinIO, PostgreSQL), runs `make dev` again with the same settings, waits for
# the batch to finish and settle, then counts: sends at the carrier per
# recipient, charges in credit_ledger and messages left `sending`. Exits
# non-zero on a duplicate, a missing charge or a stuck message (keeping the
# stack's directory for its logs); stops the stack in any case.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
N=${1:-1500}
KILL_AFTER=${2:-1.2}

say() { echo "dev-crash: $*" >&2; }

DIR=$(mktemp -d /tmp/parley-dev-crash.XXXXXX)
# Ten ports nothing listens on, from the kernel (the Temporal dev server
# opens more ports next to its own, so they are not consecutive).
read -r -a port < <(python3 -c '
import socket
socks = [socket.socket() for _ in range(10)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))')
export PARLEY_DEV_DIR=$DIR \
	PARLEY_PG_PORT=${port[0]} PARLEY_TEMPORAL_PORT=${port[1]} PARLEY_TEMPORAL_UI_PORT=${port[2]} \
	PARLEY_MINIO_PORT=${port[3]} PARLEY_MINIO_CONSOLE_PORT=${port[4]} \
	PARLEY_HTTP_ADDR=127.0.0.1:${port[5]} PARLEY_CARRIER_ADDR=127.0.0.1:${port[6]} \
	PARLEY_VOICE_PROVIDER_ADDR=127.0.0.1:${port[7]} PARLEY_MAILCATCHER_SMTP_ADDR=127.0.0.1:${port[8]} \
	PARLEY_MAILCATCHER_HTTP_ADDR=127.0.0.1:${port[9]} \
	PARLEY_SMS_DAILY_QUOTAS='free=5,US=1000000,*=100' PARLEY_SMS_REFRESH_INTERVAL=${PARLEY_SMS_REFRESH_INTERVAL:-20s}
API=http://$PARLEY_HTTP_ADDR/api/v1
say "stack in $DIR, ports ${port[*]}"

sid=
# start_dev LOG: `make dev` in its own session, ready when the API answers.
start_dev() {
	setsid make dev >>"$DIR/$1" 2>&1 </dev/null &
	sid=$!
	disown "$sid" # no job notice when it is killed
	for _ in $(seq 600); do
		if curl -sf "$API/health" >/dev/null 2>&1 && [[ -s $DIR/dev-api-key ]]; then return; fi
		kill -0 "$sid" 2>/dev/null || break
		sleep 0.5
	done
	say "make dev did not start; see $DIR/$1"
	exit 1
}
# stack_pids: every process of the stack: the make dev session (make,
# dev.sh, parley dev, the stand-ins) and the services it started in their
# own sessions (Temporal, MinIO) or through pg_ctl (PostgreSQL and its
# backends).
stack_pids() {
	local pid f
	[[ -n $sid ]] && pgrep -s "$sid" || true
	for f in "$DIR"/temporal.pid "$DIR"/minio.pid "$DIR"/postgres.pid; do
		[[ -s $f ]] || continue
		pid=$(<"$f")
		kill -0 "$pid" 2>/dev/null || continue
		echo "$pid"
		pgrep -P "$pid" || true
	done
}
stop() {
	local rc=$?
	if [[ -n $sid ]] && kill -0 "$sid" 2>/dev/null; then
		kill -INT -- "-$sid" 2>/dev/null || true
		for _ in $(seq 120); do kill -0 "$sid" 2>/dev/null || break; sleep 0.5; done
	fi
	scripts/services.sh stop "$DIR" >/dev/null 2>&1 || true
	# Kept for its logs when something was wrong.
	if ((rc == 0)); then rm -rf "$DIR"; else say "logs and data kept in $DIR"; fi
}
trap stop EXIT

start_dev dev-1.log
key=$(<"$DIR/dev-api-key")
python3 -c '
import json, sys
n = int(sys.argv[1])
print(json.dumps({"from": "+15005550006", "body": "Doors open at 7.",
    "recipients": [{"phone": "+1202555%04d" % i} for i in range(n)]}))' "$N" >"$DIR/batch.json"
answer=$(curl -sS -H "Authorization: Bearer $key" -H 'Content-Type: application/json' --data-binary @"$DIR/batch.json" "$API/sms")
batch=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["data"]["jobId"])' <<<"$answer")
sleep "$KILL_AFTER"
mapfile -t pids < <(stack_pids | sort -un)
kill -KILL "${pids[@]}" 2>/dev/null || true
killed_at=$(date +%s)
say "batch $batch admitted; SIGKILLed ${#pids[@]} processes ${KILL_AFTER}s later"
sid=
sleep 1

start_dev dev-2.log
psql_q() { psql -XAtq "postgres://postgres@127.0.0.1:$PARLEY_PG_PORT/parley?sslmode=disable" -c "$1"; }
# Sent, then settled (callbacks, or the refresh every
# PARLEY_SMS_REFRESH_INTERVAL), or five minutes.
for _ in $(seq 300); do
	left=$(psql_q "SELECT count(*) FROM sms_messages WHERE batch_id = $batch AND status IN ('queued', 'sending')")
	[[ $left == 0 ]] && break
	sleep 1
done

# The carrier's own list of what it was handed (Messages.json, every page).
. "$DIR/env"
python3 - "$PARLEY_TWILIO_BASE_URL" "$PARLEY_TWILIO_ACCOUNT_SID" "$PARLEY_TWILIO_AUTH_TOKEN" "$killed_at" >"$DIR/carrier-counts" <<'EOF'
import base64, collections, email.utils, json, sys, urllib.request
base, sid, token, killed_at = sys.argv[1:5]
before = 0
auth = "Basic " + base64.b64encode(f"{sid}:{token}".encode()).decode()
url = f"{base}/2010-04-01/Accounts/{sid}/Messages.json?PageSize=1000"
per = collections.Counter()
while url:
    with urllib.request.urlopen(urllib.request.Request(url, headers={"Authorization": auth})) as r:
        page = json.load(r)
    for m in page["messages"]:
        if m["to"].startswith("+1202555"):
            per[m["to"]] += 1
            if email.utils.parsedate_to_datetime(m["date_created"]).timestamp() < int(killed_at):
                before += 1
    nxt = page.get("next_page_uri")
    url = base + nxt if nxt else None
print(sum(per.values()), len(per), sum(1 for c in per.values() if c > 1), before)
EOF
read -r sends recipients dups before <"$DIR/carrier-counts"
charged=$(psql_q "SELECT count(*) FROM credit_ledger WHERE kind = 'charge' AND job_kind = 'sms_message' AND job_id IN (SELECT id FROM sms_messages WHERE batch_id = $batch)")
states=$(psql_q "SELECT status || '=' || count(*) FROM sms_messages WHERE batch_id = $batch GROUP BY status ORDER BY 1" | tr '\n' ' ')
stuck=$(psql_q "SELECT count(*) FROM sms_messages WHERE batch_id = $batch AND status = 'sending'")
say "carrier: $sends sends to $recipients recipients ($before before the crash), $dups recipients texted more than once"
say "ledger: $charged charges for the batch's messages"
say "messages: $states; $stuck left sending"
[[ $sends == "$N" && $dups == 0 && $charged == "$N" && $stuck == 0 ]]

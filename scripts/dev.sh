#!/usr/bin/env bash
# dev.sh: the body of `make dev`.
#
# Starts PostgreSQL, Temporal and MinIO with their data under .dev/ (kept
# across runs; PARLEY_DEV_DIR overrides), applies migrations, makes sure a dev
# account exists, then runs `parley dev` in the foreground. Ctrl-C, or any
# other way this script ends, stops everything it started.
#
# With DATABASE_URL set, that database is used and no PostgreSQL is started.
# Ports: see scripts/services.sh (PARLEY_*_PORT).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
DIR=${PARLEY_DEV_DIR:-$ROOT/.dev}
PARLEY=$ROOT/bin/parley
DEV_EMAIL=${PARLEY_DEV_EMAIL:-dev@parley.local}

say() { echo "dev: $*" >&2; }

if [[ ! -x $PARLEY ]]; then
	say "$PARLEY is missing; run: make build"
	exit 1
fi

mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)

# One `make dev` per directory: a second one would restart the first one's
# services from under it.
exec 9>"$DIR/.dev.lock"
if ! flock -n 9; then
	say "another 'make dev' is running with $DIR"
	exit 1
fi

child=
standins=()
# shellcheck disable=SC2317 # invoked by trap
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if [[ -n $child ]] && kill -0 "$child" 2>/dev/null; then
		kill -TERM "$child" 2>/dev/null || true
		wait "$child" 2>/dev/null || true
	fi
	local pid
	for pid in "${standins[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	say "stopping services"
	"$ROOT/scripts/services.sh" stop "$DIR" 9>&- || true
	exit "$rc"
}
# shellcheck disable=SC2317 # invoked by trap
on_signal() {
	# While parley runs, let it shut down cleanly and carry on waiting;
	# before that, just leave (cleanup stops what was started).
	if [[ -n $child ]] && kill -0 "$child" 2>/dev/null; then
		kill -TERM "$child" 2>/dev/null || true
	else
		exit 130
	fi
}
trap cleanup EXIT
trap on_signal INT TERM

# A shell that sourced .dev/env carries our own database's URL: that is not
# an external database, so start ours as usual.
if [[ ${DATABASE_URL:-} == "postgres://postgres@127.0.0.1:${PARLEY_PG_PORT:-5432}/parley?sslmode=disable" ]]; then
	unset DATABASE_URL
fi
"$ROOT/scripts/services.sh" start "$DIR" 9>&-
# shellcheck source=/dev/null
. "$DIR/env"

export PARLEY_HTTP_ADDR=${PARLEY_HTTP_ADDR:-127.0.0.1:8080}
export PARLEY_BASE_URL=${PARLEY_BASE_URL:-http://$PARLEY_HTTP_ADDR}
if [[ -z ${PARLEY_MEDIA_SECRET:-} ]]; then
	# Kept with the dev data so signed media URLs survive restarts.
	if [[ ! -s $DIR/media-secret ]]; then
		(umask 077 && od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$DIR/media-secret")
	fi
	PARLEY_MEDIA_SECRET=$(<"$DIR/media-secret")
	export PARLEY_MEDIA_SECRET
fi

# Web Push: a VAPID key pair kept with the dev data (browsers' subscriptions
# are bound to the public key, so it must survive restarts), exported here
# and appended to $DIR/env for other shells.
if [[ -z ${PARLEY_VAPID_PUBLIC_KEY:-} ]]; then
	if [[ ! -s $DIR/vapid-keys ]]; then
		(umask 077 && "$PARLEY" vapid generate 9>&- >"$DIR/vapid-keys")
	fi
	{
		sed 's/^/export /' "$DIR/vapid-keys"
		echo "export PARLEY_VAPID_SUBJECT=mailto:$DEV_EMAIL"
	} >>"$DIR/env"
	# shellcheck source=/dev/null
	. "$DIR/env"
fi

# dev_secret NAME LENGTH: a random hex value kept in $DIR/NAME, made once.
dev_secret() {
	if [[ ! -s $DIR/$1 ]]; then
		(umask 077 && od -An -tx1 -N"$2" /dev/urandom | tr -d ' \n' >"$DIR/$1")
	fi
	cat "$DIR/$1"
}

# The local stand-ins, each only when the developer has not pointed its
# settings at the real thing: `parley carrier` (SMS, Twilio's protocol),
# `parley voice-provider` (ElevenLabs Agents, with two demo calls) and
# `parley mailcatcher` (SMTP, with a web inbox). Their settings go to
# $DIR/env like the services' own.
{
	echo "export PARLEY_BASE_URL=$PARLEY_BASE_URL"
	if [[ -z ${PARLEY_TWILIO_ACCOUNT_SID:-} ]]; then
		carrier_addr=${PARLEY_CARRIER_ADDR:-127.0.0.1:8089}
		echo "export PARLEY_TWILIO_ACCOUNT_SID=AC$(dev_secret carrier-sid 16)"
		echo "export PARLEY_TWILIO_AUTH_TOKEN=$(dev_secret carrier-token 16)"
		echo "export PARLEY_CARRIER_ADDR=$carrier_addr"
		echo "export PARLEY_TWILIO_BASE_URL=http://$carrier_addr"
		echo "export PARLEY_NOTIFY_SMS_FROM=${PARLEY_NOTIFY_SMS_FROM:-+15005550006}"
	fi
	if [[ -z ${PARLEY_ELEVENLABS_API_KEY:-} ]]; then
		voice_addr=${PARLEY_VOICE_PROVIDER_ADDR:-127.0.0.1:8091}
		echo "export PARLEY_ELEVENLABS_API_KEY=dev_$(dev_secret voice-key 16)"
		echo "export PARLEY_ELEVENLABS_WEBHOOK_SECRET=wsec_$(dev_secret voice-webhook-secret 32)"
		echo "export PARLEY_VOICE_PROVIDER_ADDR=$voice_addr"
		echo "export PARLEY_ELEVENLABS_BASE_URL=http://$voice_addr"
	fi
	if [[ -z ${PARLEY_SMTP_URL:-} ]]; then
		echo "export PARLEY_SMTP_URL=smtp://${PARLEY_MAILCATCHER_SMTP_ADDR:-127.0.0.1:1025}"
		echo "export PARLEY_MAIL_FROM='${PARLEY_MAIL_FROM:-Parley <no-reply@parley.local>}'"
	fi
} >>"$DIR/env"
start_mail=$([[ -z ${PARLEY_SMTP_URL:-} ]] && echo 1 || true)
start_carrier=$([[ -z ${PARLEY_TWILIO_ACCOUNT_SID:-} ]] && echo 1 || true)
start_voice=$([[ -z ${PARLEY_ELEVENLABS_API_KEY:-} ]] && echo 1 || true)
# shellcheck source=/dev/null
. "$DIR/env"
if [[ -n $start_carrier ]]; then
	# The stand-in keeps its messages and owed callbacks across restarts,
	# as the real carrier does.
	PARLEY_CARRIER_STATE_DIR=${PARLEY_CARRIER_STATE_DIR:-$DIR/carrier} "$PARLEY" carrier 9>&- >>"$DIR/carrier.log" 2>&1 &
	standins+=($!)
fi
if [[ -n $start_mail ]]; then
	"$PARLEY" mailcatcher 9>&- >>"$DIR/mailcatcher.log" 2>&1 &
	standins+=($!)
fi
if [[ -n $start_voice ]]; then
	"$PARLEY" voice-provider 9>&- >>"$DIR/voice-provider.log" 2>&1 &
	standins+=($!)
fi

say "migrate up"
"$PARLEY" migrate up 9>&-

# bootstrap-dev prints a JSON object: with the new key's secret on the first
# run, {"alreadyBootstrapped":true} afterwards.
bootstrap=$("$PARLEY" admin bootstrap-dev --email "$DEV_EMAIL" 9>&-)

# json_secret: the first string field named secret (or apiKey/key/token)
# anywhere in the JSON on stdin.
json_secret() {
	if command -v python3 >/dev/null; then
		python3 -c '
import json, sys
def find(v):
    if isinstance(v, dict):
        for k in ("secret", "apiKey", "api_key", "key", "token"):
            if isinstance(v.get(k), str):
                return v[k]
        for x in v.values():
            r = find(x)
            if r:
                return r
    elif isinstance(v, list):
        for x in v:
            r = find(x)
            if r:
                return r
    return None
try:
    print(find(json.load(sys.stdin)) or "")
except ValueError:
    pass
'
	else
		sed -n 's/.*"secret"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' | head -n 1
	fi
}

api_url="http://$PARLEY_HTTP_ADDR"
key_file=$DIR/dev-api-key
secret=$(json_secret <<<"$bootstrap")
echo >&2
if [[ -n $secret ]]; then
	(umask 077 && printf '%s\n' "$secret" >"$key_file")
	say "dev account $DEV_EMAIL created. Its API key (shown once; also saved to $key_file):"
	echo >&2
	echo "    $secret" >&2
	echo >&2
	say "try:"
	echo "    curl -H \"Authorization: Bearer $secret\" $api_url/api/v1/profile" >&2
elif [[ $bootstrap == *alreadyBootstrapped* ]]; then
	if [[ -s $key_file ]]; then
		say "dev account $DEV_EMAIL exists; its API key is in $key_file. Try:"
		echo "    curl -H \"Authorization: Bearer \$(cat $key_file)\" $api_url/api/v1/profile" >&2
	else
		say "dev account $DEV_EMAIL exists (its key was printed when it was created)"
	fi
else
	say "unexpected output from 'parley admin bootstrap-dev': $bootstrap"
fi
echo >&2
say "API            $api_url"
if [[ ${PARLEY_HEADLESS:-} != 1 ]]; then
	say "Temporal UI    http://127.0.0.1:${PARLEY_TEMPORAL_UI_PORT:-8233}"
	say "MinIO console  http://127.0.0.1:${PARLEY_MINIO_CONSOLE_PORT:-9001} ($MINIO_ACCESS_KEY / $MINIO_SECRET_KEY)"
fi
if [[ -n $start_carrier ]]; then
	say "SMS carrier    $PARLEY_TWILIO_BASE_URL (local stand-in; log $DIR/carrier.log)"
	echo "    send:    curl -H \"Authorization: Bearer \$(cat $key_file)\" -H 'Content-Type: application/json' \\" >&2
	echo "               -d '{\"from\":\"+15005550006\",\"body\":\"Hi {{name}}\",\"recipients\":[{\"phone\":\"+12025550123\",\"variables\":{\"name\":\"Dana\"}}]}' $api_url/api/v1/sms" >&2
	echo "    receive: . $DIR/env && bin/parley carrier inbound --from +12025550123 --to +15005550006 --body 'Hello back'" >&2
fi
if [[ -n $start_mail ]]; then
	say "Mail inbox     http://${PARLEY_MAILCATCHER_HTTP_ADDR:-127.0.0.1:8025}/ (e-mail notifications; send a job with -F email_after=true)"
fi
if [[ -n $start_voice ]]; then
	say "Voice provider $PARLEY_ELEVENLABS_BASE_URL (local stand-in with two demo calls; log $DIR/voice-provider.log)"
fi
say "env for other shells: . $DIR/env"
echo >&2

# In the background so that a signal to this script reaches the trap at once;
# on_signal passes it on and the loop waits for parley to finish.
"$PARLEY" dev 9>&- &
child=$!
rc=0
while :; do
	wait "$child" && rc=0 || rc=$?
	kill -0 "$child" 2>/dev/null || break
done
child=
say "parley dev exited ($rc)"
exit "$rc"

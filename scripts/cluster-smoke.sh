#!/usr/bin/env bash
# cluster-smoke.sh: a by-hand check of a running `make cluster`
# (make cluster-smoke).
#
# Through each API process in turn: a transcription, a subtitle job and a
# 5-recipient SMS batch. Then MinIO node 3 is stopped and the same again
# (uploads, the workers' reads and the burned videos all go through the
# remaining three nodes), every job is followed to its end, node 3 is started
# again. Exits non-zero when a job does not end done/completed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR=${PARLEY_CLUSTER_DIR:-$ROOT/.cluster}
[[ -f $DIR/env ]] || {
	echo "smoke: no $DIR/env; run make cluster first" >&2
	exit 1
}
# shellcheck source=/dev/null
. "$DIR/env"
KEY=$(<"$DIR/dev-api-key")
WORK=$DIR/smoke
mkdir -p "$WORK"
TIMEOUT=${SMOKE_TIMEOUT:-600}

say() { echo "smoke: $*" >&2; }

if [[ ! -s $WORK/speech.wav ]]; then
	ffmpeg -nostdin -v error -y -f lavfi \
		-i "flite=voice=slt:text=the quick brown fox jumps over the lazy dog and then runs home to sleep" \
		"$WORK/speech.wav"
	ffmpeg -nostdin -v error -y -filter_complex \
		"testsrc2=size=640x360:rate=30:duration=6,format=yuv420p[v];flite=voice=slt:text=hello from the cluster smoke test,aresample=48000,apad,atrim=end=6,asetnsamples=n=1024[a]" \
		-map '[v]' -map '[a]' -c:v libx264 -preset ultrafast -c:a aac -ac 1 -t 6 "$WORK/video.mp4"
fi

json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

call() { # call METHOD URL [curl args...]: the response body; fails on a non-2xx
	local method=$1 url=$2
	shift 2
	curl -sS --fail-with-body -X "$method" -H "Authorization: Bearer $KEY" "$@" "$url"
}

# The dev account's default concurrency (a few jobs) would refuse the
# second round while the first still runs.
account=$(call GET "$PARLEY_CLUSTER_API1/api/v1/profile" | json 'd["data"]["id"]')
"$ROOT/bin/parley" admin limits set --account "$account" --concurrent-jobs 20 >/dev/null

jobs=() # "kind id api round"
submit_round() { # submit_round LABEL
	local label=$1 api id n
	for api in "$PARLEY_CLUSTER_API1" "$PARLEY_CLUSTER_API2"; do
		id=$(call POST "$api/api/v1/transcribe" -F file=@"$WORK/speech.wav" -F language=en | json 'd["data"]["id"]')
		jobs+=("transcribe $id $api $label")
		id=$(call POST "$api/api/v1/subtitles" -F file=@"$WORK/video.mp4" -F language=en | json 'd["data"]["id"]')
		jobs+=("subtitles $id $api $label")
		n=$((RANDOM % 9000 + 1000))
		id=$(call POST "$api/api/v1/sms" -H 'Content-Type: application/json' -d "{\"from\":\"+15005550006\",\"body\":\"smoke {{n}}\",\"recipients\":[
			{\"phone\":\"+1202555$n\",\"variables\":{\"n\":\"1\"}},{\"phone\":\"+1202556$n\",\"variables\":{\"n\":\"2\"}},
			{\"phone\":\"+1202557$n\",\"variables\":{\"n\":\"3\"}},{\"phone\":\"+1202558$n\",\"variables\":{\"n\":\"4\"}},
			{\"phone\":\"+1202559$n\",\"variables\":{\"n\":\"5\"}}]}" | json 'd["data"]["jobId"]')
		jobs+=("sms/jobs $id $api $label")
		say "$label: submitted through $api"
	done
}

submit_round "all nodes"
"$ROOT/scripts/cluster.sh" stop minio3
trap '"$ROOT/scripts/cluster.sh" start minio3' EXIT
submit_round "minio3 down"

deadline=$((SECONDS + TIMEOUT))
rc=0
printf '%-10s %-5s %-24s %-12s %s\n' kind id api round status
for j in "${jobs[@]}"; do
	read -r kind id api label1 label2 <<<"$j"
	while :; do
		status=$(call GET "$api/api/v1/$kind/$id" | json 'd["data"]["status"]')
		case $status in
		done | completed | failed | partial) break ;;
		esac
		if ((SECONDS > deadline)); then
			status="stuck:$status"
			break
		fi
		sleep 2
	done
	printf '%-10s %-5s %-24s %-12s %s\n' "${kind%%/*}" "$id" "${api#http://}" "$label1 $label2" "$status"
	[[ $status == done || $status == completed ]] || rc=1
done
# A burned video is read back through the front with minio3 still down.
sub=$(printf '%s\n' "${jobs[@]}" | awk '$1 == "subtitles" { id = $2; api = $3 } END { print id, api }')
read -r id api <<<"$sub"
url=$(call GET "$api/api/v1/subtitles/$id" | json 'd["data"].get("output_video_url") or d["data"].get("outputVideoUrl") or ""')
if [[ -n $url ]] && curl -fsS -o "$WORK/out.mp4" "$url" && [[ -s $WORK/out.mp4 ]]; then
	say "burned video of subtitles $id read back ($(stat -c %s "$WORK/out.mp4") bytes) with minio3 down"
else
	say "could not read back the burned video of subtitles $id ($url)"
	rc=1
fi
((rc == 0)) && say "all jobs done" || say "some jobs did not end done"
exit "$rc"

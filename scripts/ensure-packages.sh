#!/usr/bin/env bash
# Checks that the system packages parley needs at run and test time are
# installed. As root it installs the missing ones with apt-get; otherwise it
# prints the one command that would and fails.
set -euo pipefail

missing=()
need() { # need PACKAGE... when the preceding check failed
	local p
	for p in "$@"; do
		[[ " ${missing[*]-} " == *" $p "* ]] || missing+=("$p")
	done
}
have() { command -v "$1" >/dev/null 2>&1; }

check() {
	missing=()
	compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || need postgresql
	if ! have pg_isready || ! have psql; then need postgresql-client; fi
	if ! have ffmpeg || ! have ffprobe; then need ffmpeg; fi
	# The worker links libpocketsphinx (cgo, found through pkg-config); the
	# command-line tool is what the decoder's tests compare it with.
	have pocketsphinx_continuous || need pocketsphinx
	have pkg-config || need pkg-config
	pkg-config --exists pocketsphinx sphinxbase 2>/dev/null || need libpocketsphinx-dev
	[[ -d /usr/share/pocketsphinx/model/en-us/en-us ]] || need pocketsphinx-en-us
	[[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ]] || need fonts-dejavu-core
	compgen -G '/usr/share/fonts/truetype/noto/NotoSans*-Regular.ttf' >/dev/null || need fonts-noto-core
	have fc-list || need fontconfig
	have curl || need curl
	have runuser || need util-linux
	# The console's browser tests drive a headless Chromium (chromedp).
	have chromium || need chromium
	have setsid || need util-linux
	# scripts/check-clients.sh runs openapi-typescript and tsc on Node.js.
	have node || need nodejs
	have npm || need npm
}

check
((${#missing[@]} == 0)) && exit 0

if ((EUID != 0)); then
	echo "ensure-packages: missing system packages; run: sudo apt-get install -y ${missing[*]}" >&2
	exit 1
fi
if ! have apt-get; then
	echo "ensure-packages: missing system packages (${missing[*]}) and no apt-get to install them" >&2
	exit 1
fi

echo "ensure-packages: installing ${missing[*]}" >&2
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"

check
if ((${#missing[@]} != 0)); then
	echo "ensure-packages: still missing after install: ${missing[*]}" >&2
	exit 1
fi

#!/usr/bin/env bash
# install-tool.sh NAME PACKAGE VERSION CACHE_DIR DEST
#
# Puts the pinned build of a Go-installable tool at DEST. The build lives in
# CACHE_DIR (one directory per tool and version, shared across checkouts) and
# is made with `go install PACKAGE@VERSION` only when the cache lacks it.
set -euo pipefail

if (($# != 5)); then
	echo "usage: $0 NAME PACKAGE VERSION CACHE_DIR DEST" >&2
	exit 2
fi
name=$1 pkg=$2 version=$3 cache_dir=$4 dest=$5
cached="$cache_dir/$name"

# The module path is PACKAGE minus the /cmd/... suffix, if any.
module=${pkg%%/cmd/*}

is_pinned() { # is_pinned FILE: built from MODULE at VERSION
	[[ -x $1 ]] || return 1
	go version -m "$1" 2>/dev/null |
		awk -v m="$module" -v v="$version" '$1 == "mod" && $2 == m && $3 == v { ok = 1 } END { exit !ok }'
}

mkdir -p "$cache_dir"
exec 9>"$cache_dir/.lock"
if ! flock -n 9; then
	echo "install-tool: waiting for another build of $name $version ($cache_dir/.lock)" >&2
	flock 9
fi

if ! is_pinned "$cached"; then
	echo "install-tool: building $name $version into $cache_dir (several minutes, once)" >&2
	# Outside the repo and with no module flags: `go install pkg@version`
	# builds the tool with its own go.mod, never ours.
	(cd / && env -u GOFLAGS GOWORK=off GOBIN="$cache_dir" go install "$pkg@$version")
	if ! is_pinned "$cached"; then
		echo "install-tool: $cached was built but is not $module $version" >&2
		exit 1
	fi
fi

mkdir -p "$(dirname "$dest")"
tmp="$dest.tmp.$$"
cp "$cached" "$tmp"
chmod 755 "$tmp"
mv -f "$tmp" "$dest"
echo "install-tool: $dest <- $cached" >&2

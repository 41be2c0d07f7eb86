#!/usr/bin/env bash
# fuzz.sh [FUZZTIME]: runs every fuzz target of the module (func FuzzX in a
# _test.go file) for FUZZTIME each (default 5s). `make test` runs it briefly;
# `make fuzz` for longer. A failure leaves its input under the package's
# testdata/fuzz/, to be committed as a regression seed once fixed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
fuzztime=${1:-5s}

grep -rl --include='*_test.go' -E '^func Fuzz[A-Za-z0-9_]+\(' . | sort | while read -r file; do
	pkg=./$(dirname "${file#./}")
	grep -oE '^func Fuzz[A-Za-z0-9_]+' "$file" | sed 's/^func //' | while read -r target; do
		echo "==> fuzz $pkg $target ($fuzztime)"
		go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg"
	done
done

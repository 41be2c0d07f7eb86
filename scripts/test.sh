#!/usr/bin/env bash
# test.sh: go vet, then go test against throwaway services, with the
# integration tests (build tag `integration`) included.
#   PKG        packages (default ./...)
#   TESTFLAGS  extra go test flags, shell-quoted: TESTFLAGS="-run 'TestA|TestB' -v"
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

read -ra pkgs <<<"${PKG:-./...}"
flags=()
eval "flags=(${TESTFLAGS:-})"

echo "==> go vet -tags integration ${pkgs[*]}"
go vet -tags integration "${pkgs[@]}"

cmd=(go test -tags integration -count=1 -p 1 -timeout 40m "${flags[@]}" "${pkgs[@]}")
echo "==> ${cmd[*]}"
"$ROOT/scripts/with-services.sh" "${cmd[@]}"

# The parsers of client bytes, fuzzed for a few seconds each on a full run.
if [[ ${PKG:-./...} == ./... && -z ${TESTFLAGS:-} ]]; then
	"$ROOT/scripts/fuzz.sh" "${PARLEY_FUZZTIME:-5s}"
fi

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

# The API document through the client generators (openapi-typescript + tsc
# --strict, oapi-codegen, ogen): on a full run, or when the document's or the
# client's package is tested.
if [[ " ${pkgs[*]} " =~ [[:space:]](\./\.\.\.|\./api/?(\.\.\.)?|\./client/?(\.\.\.)?)[[:space:]] ]]; then
	echo "==> scripts/check-clients.sh"
	"$ROOT/scripts/check-clients.sh"
fi

echo "==> go vet -tags integration ${pkgs[*]}"
go vet -tags integration "${pkgs[@]}"

cmd=(go test -tags integration -count=1 -p 1 -timeout 40m "${flags[@]}" "${pkgs[@]}")
echo "==> ${cmd[*]}"
"$ROOT/scripts/with-services.sh" "${cmd[@]}"

# On a full run: the test of two-way SMS traffic racing on one thread again
# under the race detector (a build of its own, so only there), then the
# parsers of client bytes, fuzzed for a few seconds each.
if [[ ${PKG:-./...} == ./... && -z ${TESTFLAGS:-} ]]; then
	race=(go test -race -tags integration -count=1 -timeout 20m -run '^TestSMSTwoWayTrafficOnOneThread$' ./e2e/)
	echo "==> ${race[*]}"
	"$ROOT/scripts/with-services.sh" "${race[@]}"
	"$ROOT/scripts/fuzz.sh" "${PARLEY_FUZZTIME:-5s}"
fi

#!/usr/bin/env bash
# check-clients.sh: the API document (api/openapi.json) through the client
# generators people use, at pinned versions; fails on any error, refusal,
# warning or skipped operation.
#
#   openapi-typescript + openapi-fetch: client/typescript/example.ts calls
#     every operation and must type-check under tsc --strict (npm ci from
#     client/typescript/package-lock.json);
#   oapi-codegen and ogen (built from the Go module proxy by install-tool.sh):
#     a client for every operation and webhook, and the generated code builds.
#
# The npm cache and the Go tools live under PARLEY_TOOLS_CACHE (default
# ~/.cache/parley/tools); both are rebuilt from the registries when missing.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

OAPI_CODEGEN_VERSION=v2.8.2
OGEN_VERSION=v1.24.0
CACHE=${PARLEY_TOOLS_CACHE:-$HOME/.cache/parley/tools}
DOC=$ROOT/api/openapi.json
TS=$ROOT/client/typescript

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() {
	echo "check-clients: $*" >&2
	exit 1
}

# The operations and webhooks of the document, "METHOD path operationId" and
# "webhook name", read with node (which the TypeScript check needs anyway).
command -v node >/dev/null || fail "node is not installed (v18 or later)"
node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 18 ? 0 : 1)' ||
	fail "node $(node --version) is too old (v18 or later)"
node -e '
const doc = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
const methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
for (const [path, item] of Object.entries(doc.paths))
  for (const m of methods) if (item[m]) console.log(`op ${m.toUpperCase()} ${path} ${item[m].operationId}`);
for (const name of Object.keys(doc.webhooks || {})) console.log(`webhook ${name}`);
' "$DOC" >"$work/operations"
ops=$(grep -c '^op ' "$work/operations")
hooks=$(grep -c '^webhook ' "$work/operations" || true)
echo "check-clients: $ops operations, $hooks webhooks"

# --- openapi-typescript + openapi-fetch, tsc --strict -----------------------
echo "==> openapi-typescript + tsc --strict (client/typescript)"
(cd "$TS" && npm ci --no-audit --no-fund --loglevel=error --cache "$CACHE/npm" >"$work/npm.log" 2>&1) ||
	{ cat "$work/npm.log" >&2; fail "npm ci failed"; }
(cd "$TS" && npx --no-install openapi-typescript "$DOC" -o schema.gen.d.ts) >"$work/ts.log" 2>&1 ||
	{ cat "$work/ts.log" >&2; fail "openapi-typescript failed"; }
if grep -Eiq 'warn|error|⚠' "$work/ts.log"; then
	cat "$work/ts.log" >&2
	fail "openapi-typescript warned"
fi
(cd "$TS" && npx --no-install tsc -p tsconfig.json) || fail "tsc --strict found errors in client/typescript/example.ts"
while read -r kind method path _; do
	[[ $kind == op ]] || continue
	grep -Fq "api.$method(\"$path\"" "$TS/example.ts" || fail "client/typescript/example.ts does not call $method $path"
done <"$work/operations"

# --- oapi-codegen -----------------------------------------------------------
echo "==> oapi-codegen $OAPI_CODEGEN_VERSION"
"$ROOT/scripts/install-tool.sh" oapi-codegen github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen \
	"$OAPI_CODEGEN_VERSION" "$CACHE/oapi-codegen-$OAPI_CODEGEN_VERSION" "$work/bin/oapi-codegen" 2>/dev/null
mkdir -p "$work/oapi"
cat >"$work/oapi.yaml" <<EOF
package: generated
generate:
  client: true
  models: true
output: $work/oapi/generated.go
EOF
"$work/bin/oapi-codegen" -config "$work/oapi.yaml" "$DOC" >"$work/oapi.log" 2>&1 ||
	{ cat "$work/oapi.log" >&2; fail "oapi-codegen refused the document"; }
if [[ -s $work/oapi.log ]]; then
	cat "$work/oapi.log" >&2
	fail "oapi-codegen warned"
fi
while read -r kind a _ id; do
	[[ $kind == op ]] || continue
	# Multipart- and text-only bodies get the ...WithBody method alone.
	grep -Eq "^func \(c \*Client\) ${id^}(WithBody)?\(ctx" "$work/oapi/generated.go" ||
		fail "oapi-codegen made no client for $a ($id)"
done <"$work/operations"
n=$(grep -c 'WebhookRequest(targetURL string' "$work/oapi/generated.go" || true)
((n == hooks)) || fail "oapi-codegen made $n webhook requests for $hooks webhooks"

# --- ogen -------------------------------------------------------------------
echo "==> ogen $OGEN_VERSION"
"$ROOT/scripts/install-tool.sh" ogen github.com/ogen-go/ogen/cmd/ogen \
	"$OGEN_VERSION" "$CACHE/ogen-$OGEN_VERSION" "$work/bin/ogen" 2>/dev/null
# No ignore_not_implemented: any construct ogen cannot generate fails here.
"$work/bin/ogen" -target "$work/ogen/generated" -package generated -clean "$DOC" >"$work/ogen.log" 2>&1 ||
	{ grep -v '^INFO' "$work/ogen.log" >&2; fail "ogen refused the document"; }
if grep -Eq '^(WARN|ERROR)|Skipping' "$work/ogen.log"; then
	grep -E '^(WARN|ERROR)|Skipping' "$work/ogen.log" >&2
	fail "ogen warned or skipped"
fi
n=$(grep -Ec '^func \(c \*Client\) [A-Z][A-Za-z0-9]*\(ctx context.Context' "$work/ogen/generated/oas_client_gen.go" || true)
((n == ops)) || fail "ogen made $n client operations for $ops operations"
n=$(grep -Ec '^func \(c \*WebhookClient\) [A-Z][A-Za-z0-9]*\(ctx context.Context' "$work/ogen/generated/oas_client_gen.go" || true)
((n == hooks)) || fail "ogen made $n webhook clients for $hooks webhooks"

# Both generated packages build, in a module of their own (each generator's
# runtime at the version its generator wants).
echo "==> go build of the generated code"
cat >"$work/go.mod" <<EOF
module clientcheck

go 1.24
EOF
(cd "$work" && env -u GOFLAGS GOWORK=off GOFLAGS=-mod=mod go get \
	"github.com/ogen-go/ogen@$OGEN_VERSION" github.com/oapi-codegen/runtime@v1.9.0 >/dev/null 2>&1 &&
	env -u GOFLAGS GOWORK=off GOFLAGS=-mod=mod go mod tidy >/dev/null 2>&1 &&
	env -u GOFLAGS GOWORK=off go build ./...) || fail "the generated code does not build"
echo "check-clients: openapi-typescript, oapi-codegen and ogen are clean"

#!/usr/bin/env bash
# bench-compare.sh: the performance benchmarks (e2e/bench_test.go) of a
# reference commit and of this working tree, run on one machine in one go,
# compared by benchstat.
#   REF    commit or tag to compare against (default: the newest release's
#          commit, from its CHANGELOG.md heading "## vX.Y.Z — DATE — commit HASH";
#          the newest heading that names one)
#   BENCH  benchmark regexp, as go test -bench takes it (default: all)
#   COUNT  runs of each tree (default 5)
#
# REF is checked out in a git worktree at .bench/ref (removed afterwards; a
# fixed path, so that the Go build cache serves a later comparison with the
# same REF) and each tree's e2e test binary is compiled once. The runs are
# interleaved, REF then this tree, COUNT times, so that whatever else the
# machine does weighs on both alike. Each run gets fresh services (PostgreSQL,
# Temporal, MinIO from this tree's scripts/with-services.sh): the two trees may
# migrate the database to different schemas, and what one run leaves behind
# (rows, workflow histories, objects) would slow the run after it, so a shared
# set would favour whichever tree runs first; fresh services also measure each
# tree as `make bench` does. Starting them costs some seconds a run.
#
# The raw results (ref.txt, tree.txt) and the table (benchstat.txt) stay in
# .bench/. A benchmark only one tree has is named as such and shown in its
# column alone. Exits non-zero when a run failed (the table still shows the
# runs that finished) or when no benchmark matches BENCH in either tree.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

# golang.org/x/perf has no releases; this is a commit of its master from the
# Go module proxy.
BENCHSTAT_VERSION=v0.0.0-20260908200009-22c9c6c9d4da
CACHE=${PARLEY_TOOLS_CACHE:-$HOME/.cache/parley/tools}
BENCH=${BENCH:-.}
COUNT=${COUNT:-5}
OUT=$ROOT/.bench

if ! [[ $COUNT =~ ^[1-9][0-9]*$ ]]; then
	echo "bench-compare: COUNT must be a positive number, not '$COUNT'" >&2
	exit 2
fi

# release_commit: "vX.Y.Z HASH" of the newest CHANGELOG.md release heading that
# names its commit; before it, "vX.Y.Z" alone for each newer heading that does
# not yet (a release between its tag and the commit naming it).
release_commit() {
	awk '/^## v/ {
		for (i = 3; i < NF; i++) if ($i == "commit") { print $2, $(i + 1); exit }
		print $2
	}' CHANGELOG.md
}

ref_label=${REF:-}
if [[ -z ${REF:-} ]]; then
	while read -r release REF; do
		[[ -n $REF ]] && break
		echo "==> CHANGELOG.md's $release heading names no commit yet (see the README's \"Releasing\"); skipped"
	done < <(release_commit)
	if [[ -z ${REF:-} ]]; then
		echo "bench-compare: no release heading of CHANGELOG.md names its commit (## vX.Y.Z — DATE — commit HASH); give REF=<commit>" >&2
		exit 2
	fi
	ref_label="$release ($REF)"
fi
if ! ref_commit=$(git rev-parse --verify --quiet "$REF^{commit}"); then
	echo "bench-compare: $REF is no commit of this repository (a shallow clone may lack it: git fetch --unshallow)" >&2
	exit 2
fi

mkdir -p "$OUT"
exec 8>"$OUT/lock"
if ! flock -n 8; then
	echo "bench-compare: another comparison runs in this checkout ($OUT/lock)" >&2
	exit 1
fi
rm -rf "$OUT/ref" "$OUT/bin" "$OUT"/{ref.txt,tree.txt,benchstat.txt,run.out,run.err}
git worktree prune

# shellcheck disable=SC2317 # invoked by trap
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	git worktree remove --force "$OUT/ref" 2>/dev/null || rm -rf "$OUT/ref"
	git worktree prune
	rm -rf "$OUT/bin"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

"$ROOT/scripts/install-tool.sh" benchstat golang.org/x/perf/cmd/benchstat \
	"$BENCHSTAT_VERSION" "$CACHE/benchstat-$BENCHSTAT_VERSION" "$OUT/bin/benchstat"

git worktree add --detach --quiet "$OUT/ref" "$ref_commit"

dirty=
[[ -n $(git status --porcelain) ]] && dirty=", with uncommitted changes"
echo "==> REF $ref_label against this tree ($(git rev-parse --short HEAD)$dirty); BENCH=$BENCH COUNT=$COUNT"

# The test binaries build cmd/parley from ../cmd/parley (e2e/kill_test.go), so
# each runs in its own tree's e2e/.
declare -A tree=([ref]="$OUT/ref" [tree]="$ROOT")
for t in ref tree; do
	echo "==> compiling the e2e test binary of $t (${tree[$t]})"
	(cd "${tree[$t]}" && go test -c -tags integration -o "$OUT/bin/$t.test" ./e2e/)
done

# The benchmarks each tree has that BENCH's first element matches (go test's
# -list takes no sub-benchmark part).
declare -A has
for t in ref tree; do
	has[$t]=$(cd "${tree[$t]}/e2e" && "$OUT/bin/$t.test" -test.list "${BENCH%%/*}" | grep '^Benchmark' || true)
done
only() { comm -23 <(sort <<<"$1") <(sort <<<"$2") | grep . || true; }
for name in $(only "${has[ref]}" "${has[tree]}"); do
	echo "==> $name is only in REF: its row has no figure for this tree"
done
for name in $(only "${has[tree]}" "${has[ref]}"); do
	echo "==> $name is only in this tree: its row has no figure for REF"
done
if [[ -z ${has[ref]}${has[tree]} ]]; then
	echo "bench-compare: no benchmark matches BENCH=$BENCH in either tree" >&2
	exit 1
fi

failed=()
for ((i = 1; i <= COUNT; i++)); do
	for t in ref tree; do
		[[ -n ${has[$t]} ]] || continue
		echo "==> run $i/$COUNT: $t"
		# stderr apart: the processes a benchmark starts log there, and would
		# otherwise break into a result line.
		log=$OUT/run.out errlog=$OUT/run.err
		if ! "$ROOT/scripts/with-services.sh" bash -c 'cd "$1" && exec "$2" -test.run "^\$" -test.bench "$3" -test.benchtime 1x -test.timeout 60m' \
			_ "${tree[$t]}/e2e" "$OUT/bin/$t.test" "$BENCH" >"$log" 2>"$errlog"; then
			failed+=("run $i of $t")
			tail -n 20 "$errlog" >&2
			tail -n 40 "$log" >&2
		fi
		# Result lines (a name, the iterations, ns/op and the metrics; not the
		# name of a benchmark that failed) and the goos/goarch/pkg/cpu header
		# benchstat reads.
		result='^Benchmark[^[:space:]]*[[:space:]]+[0-9]+[[:space:]]+[0-9.e+]+ ns/op'
		grep -E "$result|^(goos|goarch|pkg|cpu):" "$log" >>"$OUT/$t.txt" || true
		grep -E "$result" "$log" || true
	done
done

echo "==> benchstat ref=REF $ref_label, tree=this tree"
if [[ -s $OUT/ref.txt || -s $OUT/tree.txt ]]; then
	touch "$OUT/ref.txt" "$OUT/tree.txt"
	(cd "$OUT" && bin/benchstat ref=ref.txt tree=tree.txt) | tee "$OUT/benchstat.txt"
fi
if ((${#failed[@]})); then
	echo "bench-compare: failed: ${failed[*]}" >&2
	exit 1
fi

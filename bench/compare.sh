#!/usr/bin/env bash
# Before and after: the benchmark of an earlier revision and of this tree, run alternately on this
# machine (before, after, after, before, ...), then one table of the medians side by side.
#
#   bench/compare.sh REV [--turns N] [--scenarios "broadcast roundtrip"] [run options, e.g. --transports ipc]
#
# REV is exported with `git archive` into .build/compare/REV and built there (release); each turn
# runs `lifeline-bench run --quick --only SCENARIO` of both. Results: bench/results/compare-REV/
# (each run's directory and compare.txt). It never fails on a number.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../deploy/setup.sh"
ensure_prerequisites
cd "$lifeline_root"
[ $# -ge 1 ] || { echo "usage: bench/compare.sh REV [--turns N] [--scenarios LIST] [run options]" >&2; exit 2; }
revision=$(git rev-parse --short "$1") || { echo "bench/compare.sh: no revision '$1'" >&2; exit 2; }
shift
turns=3
scenarios="broadcast roundtrip"
passed=()
while [ $# -gt 0 ]; do
    case "$1" in
    --turns) turns=$2; shift 2 ;;
    --scenarios) scenarios=$2; shift 2 ;;
    *) passed+=("$1"); shift ;;
    esac
done
before_tree="$lifeline_root/.build/compare/$revision"
output="$lifeline_root/bench/results/compare-$revision"
build() {
    (cd "$1" && for product in lifeline-bench lifeline; do
        swift build -c release --product "$product" 2>&1 | grep -E "error|warning: [^']" >&2 || true
        [ -x ".build/release/$product" ] || { echo "build of $product failed in $1" >&2; exit 1; }
    done)
}
if [ ! -f "$before_tree/Package.swift" ]; then
    mkdir -p "$before_tree"
    git archive "$revision" | tar -x -C "$before_tree"
fi
echo "building $revision (release) in $before_tree ..." >&2
build "$before_tree"
echo "building this tree (release) ..." >&2
build "$lifeline_root"
rm -rf "$output"
mkdir -p "$output"
run() { # run TREE LABEL TURN SCENARIO
    (cd "$1" && .build/release/lifeline-bench run --quick --only "$4" --out "$output/$2-$3-$4" ${passed[@]+"${passed[@]}"} \
        >/dev/null 2>"$output/$2-$3-$4.log") || echo "$2 run $3 of $4 failed: see $output/$2-$3-$4.log" >&2
}
for turn in $(seq 1 "$turns"); do
    for scenario in $scenarios; do
        echo "turn $turn/$turns: $scenario" >&2
        if [ $((turn % 2)) -eq 1 ]; then
            run "$before_tree" before "$turn" "$scenario"
            run "$lifeline_root" after "$turn" "$scenario"
        else
            run "$lifeline_root" after "$turn" "$scenario"
            run "$before_tree" before "$turn" "$scenario"
        fi
    done
done
arguments=()
for directory in "$output"/before-*/; do arguments+=(--before "$directory"); done
for directory in "$output"/after-*/; do arguments+=(--after "$directory"); done
.build/release/lifeline-bench compare "${arguments[@]}" | tee "$output/compare.txt"

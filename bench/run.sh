#!/usr/bin/env bash
# The dispatch-latency benchmark: Lifeline against raw libzmq in the same run.
#
#   bench/run.sh              full run (about 10 minutes on 2 cores)
#   bench/run.sh --quick      smaller samples (2–3 minutes)
#   bench/run.sh --only broadcast|roundtrip|throughput|paced|sustained   [--transports ipc] [--out DIR]
#
# Builds in release mode, starts real broker, service and baseline processes on loopback, prints a
# table and writes bench/results/results.json, table.txt and SVG charts. It never fails on a number.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../deploy/setup.sh"
ensure_prerequisites
cd "$lifeline_root"
echo "building (release) ..." >&2
set +e
swift build -c release --product lifeline-bench 2>&1 | grep -v "prohibited flag" | grep -E "error|warning|Compiling|Build" >&2
status=${PIPESTATUS[0]}
swift build -c release --product lifeline 2>&1 | grep -v "prohibited flag" | grep -E "error|warning" >&2
status=$((status + PIPESTATUS[0]))
set -e
[ "$status" -eq 0 ] || { echo "build failed" >&2; exit 1; }
export BENCH_SWIFT_VERSION
BENCH_SWIFT_VERSION=$(swift --version 2>/dev/null | head -n 1)
case " $* " in
*" --out "*) exec .build/release/lifeline-bench run "$@" ;;
*) exec .build/release/lifeline-bench run --out "$lifeline_root/bench/results" "$@" ;;
esac

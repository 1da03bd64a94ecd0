#!/usr/bin/env bash
# Actors by key, measured with real processes:
#  1. chaos: KEYS carts (lifeline-cart, one actor per user) over 3 instances under 8 call loops, one
#     instance kill -9'd every 2 s and restarted, KILLS times. Each activation journals its start and
#     stop; it fails on any two activations of one key that overlap, on a call that failed other than
#     retryably (503, 504), or on a cart whose contents disagree with the adds it answered.
#  2. cost: the round-trip rows of the call scenario (release build, tcp and ipc, interleaved): a func
#     of the service-level actor (`lifeline actor`), the same func on a placed key (`lifeline actor by
#     key`), and on a new key each time (`lifeline actor activation`: placement plus activation).
#
#   bash bench/actors.sh [KEYS] [KILLS]      (default 1000 10)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../deploy/setup.sh"
ensure_prerequisites
cd "$lifeline_root"
echo "== chaos: ${1:-1000} keys, 3 instances, one killed -9 every 2 s, ${2:-10} times" >&2
swift build --build-tests 2>&1 | grep -E "error|warning: [^']" >&2 || true
LIFELINE_ACTOR_KEYS="${1:-1000}" LIFELINE_ACTOR_KILLS="${2:-10}" LIFELINE_ACTOR_INTERVAL_MS=2000 \
    swift test --skip-build --filter "KeyedActorProcessTests/killedUnderCalls" 2>&1 |
    grep -E "actors by key:|✘|passed after|failed after"
echo "== cost: call round trips, service-level actor against actor by key (release build)" >&2
for product in lifeline lifeline-bench; do
    swift build -c release --product "$product" 2>&1 | grep -E "error|warning: [^']" >&2 || true
done
.build/release/lifeline-bench run --only roundtrip --quick --no-curve --out "${LIFELINE_BENCH_OUT:-bench/results/actors}"

#!/usr/bin/env bash
# Several instances of one service, measured with real processes (release build):
#  1. scale: calls per second of a CPU-bound method (lifeline-probe's `compute`, one call at a time
#     per process) served by 1 and by 2 instances, in alternate rounds on one broker;
#  2. chaos: 3 instances under 4 call loops (idempotent `sleep` and plain `spin`), one instance
#     kill -9'd every 2 s and restarted, KILLS times: idempotent calls failed, other calls answered
#     or failed `unavailable`, any other failure (a deadline) — it fails if an idempotent call
#     failed or a call waited out its deadline.
#
#   bash bench/replicas.sh [KILLS] [ROUNDS]      (default 10 3)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../deploy/setup.sh"
ensure_prerequisites
cd "$lifeline_root"
echo "building (release) ..." >&2
for product in lifeline lifeline-probe lifeline-bench; do
    swift build -c release --product "$product" 2>&1 | grep -E "error|warning: [^']" >&2 || true
done
echo "== scale: 1 and 2 instances of a CPU-bound method, $(nproc) cores" >&2
.build/release/lifeline-bench replicas --rounds "${2:-3}" --seconds 5 --callers 4 --work-ms 2
echo "== chaos: 3 instances, one killed -9 every 2 s, ${1:-10} times" >&2
swift build --build-tests 2>&1 | grep -E "error|warning: [^']" >&2 || true
LIFELINE_REPLICA_KILLS="${1:-10}" LIFELINE_REPLICA_INTERVAL_MS=2000 \
    swift test --skip-build --filter "ReplicaTests/killedUnderCalls" 2>&1 | grep -E "replicas:|✘|passed after|failed after"

#!/usr/bin/env bash
# The chaos run, longer than CI's: a numbered stream through the real broker and a real service
# (lifeline-probe with an exactly-once cursor), both killed -9 and restarted again and again; it
# prints lost, duplicated and out-of-order counts and fails if any is not 0.
#
#   bash bench/chaos.sh [EVENTS] [BROKER_KILLS] [SERVICE_KILLS]     (default 20000 5 30)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../deploy/setup.sh"
ensure_prerequisites
cd "$lifeline_root"
swift build --build-tests 2>&1 | grep -E "error|warning" >&2 || true
export LIFELINE_CHAOS_EVENTS="${1:-20000}" LIFELINE_CHAOS_BROKER_KILLS="${2:-5}" LIFELINE_CHAOS_SERVICE_KILLS="${3:-30}"
swift test --skip-build --filter ChaosTests 2>&1 | grep -E "killed|chaos:|✘|passed after|failed after"

#!/usr/bin/env bash
# The broker group's failover run, longer than CI's: a real etcd, three brokers of one group, a
# journaled service (lifeline-probe) and a publisher with publication ids; the leader is killed -9
# again and again (and started again as a standby). Prints, for every kill, the time from the kill
# to the first publish the new leader accepted, then lost, duplicated and out-of-order counts and
# the p50 and max; fails if any count is not 0.
#
#   bash bench/group-failover.sh [EVENTS] [KILLS]     (default 5000 10)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../deploy/setup.sh"
ensure_prerequisites
ensure_etcd
cd "$lifeline_root"
swift build --build-tests 2>&1 | grep -E "error|warning" >&2 || true
export LIFELINE_GROUP_EVENTS="${1:-5000}" LIFELINE_GROUP_KILLS="${2:-10}"
swift test --skip-build --filter "BrokerGroupTests/failover" 2>&1 | grep -E "^group|✘|passed after|failed after"

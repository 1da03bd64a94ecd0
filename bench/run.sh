#!/usr/bin/env bash
# The dispatch-latency benchmark: Lifeline against raw libzmq, NATS and Redis in the same run.
#
#   bench/run.sh              full run (about 10 minutes on 2 cores)
#   bench/run.sh --quick      smaller samples (2–3 minutes)
#   bench/run.sh --only broadcast|roundtrip|throughput|paced|sustained|guaranteed   [--transports ipc] [--out DIR]
#
# Builds in release mode, starts real broker, service and baseline processes on loopback, prints a
# table and writes bench/results/results.json, table.txt and SVG charts. It never fails on a number.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../deploy/setup.sh"
ensure_prerequisites
# The peers measured in the same run: installed like libzmq when root; without them, their rows are
# skipped and the run says so.
peers=()
command -v nats-server >/dev/null 2>&1 || [ -x /usr/sbin/nats-server ] || peers+=(nats-server)
command -v redis-server >/dev/null 2>&1 || [ -x /usr/bin/redis-server ] || peers+=(redis-server)
# etcd: for the guaranteed tier's replicated rows (a broker group against a JetStream R3 cluster).
command -v etcd >/dev/null 2>&1 || peers+=(etcd-server)
if [ ${#peers[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then
        echo "installing ${peers[*]} (benchmark peers) ..." >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y "${peers[@]}" >/dev/null 2>&1 || {
            apt-get update >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y "${peers[@]}" >/dev/null 2>&1
        } || echo "bench: could not install ${peers[*]}; their rows are skipped" >&2
    else
        echo "bench: ${peers[*]} not installed (sudo apt-get install -y ${peers[*]}); their rows are skipped" >&2
    fi
fi
cd "$lifeline_root"
echo "building (release) ..." >&2
set +e
swift build -c release --product lifeline-bench 2>&1 | grep -E "error|warning|Compiling|Build" >&2
status=${PIPESTATUS[0]}
swift build -c release --product lifeline 2>&1 | grep -E "error|warning" >&2
status=$((status + PIPESTATUS[0]))
set -e
[ "$status" -eq 0 ] || { echo "build failed" >&2; exit 1; }
export BENCH_SWIFT_VERSION
BENCH_SWIFT_VERSION=$(swift --version 2>/dev/null | head -n 1)
case " $* " in
*" --out "*) exec .build/release/lifeline-bench run "$@" ;;
*) exec .build/release/lifeline-bench run --out "$lifeline_root/bench/results" "$@" ;;
esac

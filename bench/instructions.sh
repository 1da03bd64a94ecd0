#!/usr/bin/env bash
# Counts the instructions the broker executes per event, exactly (valgrind's callgrind), for
# closed-loop PUBLISHes (one outstanding, a reply each) to one benchmark service over ipc:
# deterministic where the latency figures are noisy, so a change to the broker's hot path can be
# judged on its own. Prints instructions per event for each broker thread and the functions that
# cost most (inclusive).
#
#   bench/instructions.sh [EVENTS]     (default 2000; needs valgrind: apt-get install -y valgrind)
#
# Only the broker runs under valgrind: a service's Swift concurrency runtime does not start there
# (valgrind 3.19 stops with an internal error in libdispatch's threads).
set -euo pipefail
cd "$(dirname "$0")/.."
events="${1:-2000}"
command -v valgrind >/dev/null || {
    echo "valgrind is not installed (apt-get install -y valgrind)" >&2
    exit 1
}
swift build -c release --product lifeline 2>&1 | grep -E "error|warning: [^p]" >&2 || true
swift build -c release --product lifeline-bench 2>&1 | grep -E "error|warning: [^p]" >&2 || true
bin=.build/release
work=$(mktemp -d)
trap 'kill $service $broker 2>/dev/null || true; sleep 0.5; kill -9 $service $broker 2>/dev/null || true; rm -rf "$work"' EXIT
valgrind --tool=callgrind --callgrind-out-file="$work/broker.cg" --dump-instr=no --separate-threads=yes \
    --instr-atstart=no "$bin/lifeline" broker --control "ipc://$work/control" --bus "ipc://$work/bus" \
    >"$work/broker.out" 2>"$work/broker.err" &
broker=$!
for _ in $(seq 300); do grep -q READY "$work/broker.out" && break; sleep 0.2; done
grep -q READY "$work/broker.out" || { cat "$work/broker.err" >&2; exit 1; }
"$bin/lifeline-bench" service --index 0 --ack "ipc://$work/ack" --events bench.blast \
    --broker "ipc://$work/control" >"$work/service.out" 2>"$work/service.err" &
service=$!
for _ in $(seq 300); do grep -q READY "$work/service.out" && break; sleep 0.2; done
grep -q READY "$work/service.out" || { cat "$work/service.err" >&2; exit 1; }
# Warm up (first calls resolve symbols and fill caches), then count only the measured events.
"$bin/lifeline-bench" blast --broker "ipc://$work/control" --count 200 --window 1 --event bench.blast >/dev/null
callgrind_control -i on "$broker" >/dev/null 2>&1
"$bin/lifeline-bench" blast --broker "ipc://$work/control" --count "$events" --window 1 --event bench.blast
callgrind_control -i off "$broker" >/dev/null 2>&1
callgrind_control -d "$broker" >/dev/null 2>&1
sleep 1
for file in "$work"/broker.cg.1-*; do
    total=$(grep -m1 '^totals:' "$file" | awk '{print $2}')
    [ "${total:-0}" -gt $((events * 100)) ] || continue
    thread=${file##*-}
    echo "thread $thread: $((total / events)) instructions per event"
    callgrind_annotate --inclusive=yes "$file" 2>/dev/null | grep -E '^ *[0-9,]+ \(' | sed -n '2,26p' \
        | sed -E 's/ \[[^]]*\]$//' \
        | awk -v n="$events" '{x=$1; gsub(",","",x); $1=""; $2=""; printf "  %7d %s\n", x/n, substr($0,3,140)}'
done

#!/usr/bin/env bash
# A typed event's CPU against an untyped one's, in one service process (issue 40, point 1), and the
# floor any `Decodable` type sets: paced phases of the same 64 B payload, in rotating order, to
#   bench.n1     handled untyped, reading k, q and p (the pool row's handler)
#   typed.n1     handled typed: the payload decoded as a struct of k, q and p
#   skeleton.n1  the untyped reads plus a decode that reads nothing (SilentDecoder): what Swift's
#                Decodable machinery costs by itself, before any decoder reads a byte
# Prints the service's CPU per event in each phase (user + system time of all its threads, exited
# ones too, from /proc/PID/stat: in clock ticks, so a phase is long enough for a tick to be under 1 %
# of it) and the ratios to the untyped phase of the same round.
#
#   bench/typed-cpu.sh [ROUNDS] [EVENTS] [RATE]      (default 8 rounds of 40 000 events at 5 000/s)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-8}"
count="${2:-40000}"
rate="${3:-5000}"
swift build -c release --product lifeline 2>&1 | grep -E "error|warning: [^p]" >&2 || true
swift build -c release --product lifeline-bench 2>&1 | grep -E "error|warning: [^p]" >&2 || true
bin=.build/release
work=$(mktemp -d)
service="" broker=""
trap 'kill $service $broker 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
"$bin/lifeline" broker --control "ipc://$work/control" --bus "ipc://$work/bus" \
    >"$work/broker.out" 2>"$work/broker.err" &
broker=$!
for _ in $(seq 300); do grep -q READY "$work/broker.out" && break; sleep 0.1; done
grep -q READY "$work/broker.out" || { cat "$work/broker.err" >&2; exit 1; }
"$bin/lifeline-bench" service --index 0 --ack "ipc://$work/ack" --pool-events bench.n1 \
    --typed-events typed.n1 --skeleton-events skeleton.n1 --broker "ipc://$work/control" \
    >"$work/service.out" 2>"$work/service.err" &
service=$!
for _ in $(seq 300); do grep -q READY "$work/service.out" && break; sleep 0.1; done
grep -q READY "$work/service.out" || { cat "$work/service.err" >&2; exit 1; }

ticks=$(getconf CLK_TCK)
# The fields after the command's name, which may hold spaces: utime and stime are the 12th and 13th.
cpu() { sed 's/.*) //' /proc/"$service"/stat | awk -v t="$ticks" '{printf "%.0f", ($12 + $13) * 1e9 / t}'; }
publish() {
    "$bin/lifeline-bench" blast --broker "ipc://$work/control" --count "$1" --rate "$rate" --event "$2" >/dev/null
}
events=(bench.n1 typed.n1 skeleton.n1)
for event in "${events[@]}"; do publish 5000 "$event"; done
echo "round event CPU-µs-per-event"
for round in $(seq "$rounds"); do
    for slot in 0 1 2; do
        event=${events[$(((round + slot) % 3))]}
        sleep 0.3
        before=$(cpu)
        publish "$count" "$event"
        sleep 0.3
        after=$(cpu)
        awk -v r="$round" -v e="$event" -v a="$before" -v b="$after" -v n="$count" \
            'BEGIN {printf "%d %s %.2f\n", r, e, (b - a) / n / 1000}'
    done
done | tee "$work/phases"
for name in typed.n1 skeleton.n1; do
    awk -v name="$name" '{ cpu[$1, $2] = $3; if ($1 > rounds) rounds = $1 }
        END { for (r = 1; r <= rounds; r++) print cpu[r, name] / cpu[r, "bench.n1"] }' "$work/phases" |
        sort -n | awk -v name="$name" '
        { values[NR] = $1; sum += $1; squares += $1 * $1 }
        END {
            mean = sum / NR
            se = NR > 1 ? sqrt((squares - NR * mean * mean) / (NR - 1) / NR) : 0
            median = NR % 2 ? values[(NR + 1) / 2] : (values[NR / 2] + values[NR / 2 + 1]) / 2
            printf "%s / bench.n1: mean %.3f ± %.3f (standard error), median %.3f, %d rounds\n", name, mean, se, median, NR
        }'
done

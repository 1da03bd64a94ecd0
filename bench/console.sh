#!/usr/bin/env bash
# The web console, measured and pictured (release build):
#   bench/console.sh cost [--rate N] [--seconds S]   the broker's CPU with and without an open page,
#                                                    the bus at N events/s (default 10000), phases of
#                                                    S seconds (default 20), interleaved: off, on, off, on
#   bench/console.sh screenshot FILE [URL]           a PNG of the page in headless Chromium (default URL:
#                                                    the console deploy/launch.sh started)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../deploy/setup.sh"
cd "$lifeline_root"
bin="$lifeline_root/.build/release"
work=$(mktemp -d /tmp/lifeline-console-bench.XXXXXX)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    pkill -f "user-data-dir=$work" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

need_browser() {
    command -v chromium >/dev/null && command -v chromedriver >/dev/null || {
        say "console.sh: needs chromium and chromium-driver (apt-get install -y chromium chromium-driver)"
        exit 1
    }
}

# Waits for a line starting with $2 in file $1 (10 s at most) and prints it.
ready_line() {
    for _ in $(seq 1 200); do
        if grep -q "^$2" "$1" 2>/dev/null; then grep -m1 "^$2" "$1"; return 0; fi
        sleep 0.05
    done
    say "console.sh: no '$2' line in $1:"; cat "$1" >&2; exit 1
}

# CPU seconds (user + system) a process has used so far.
cpu_seconds() {
    awk -v tick="$(getconf CLK_TCK)" '{ print ($14 + $15) / tick }' "/proc/$1/stat" 2>/dev/null || echo 0
}

# CPU seconds of every Chromium process of this run.
browser_seconds() {
    local total=0 pid
    for pid in $(pgrep -f "user-data-dir=$work/chromium" || true); do
        total=$(awk -v a="$total" -v b="$(cpu_seconds "$pid")" 'BEGIN { print a + b }')
    done
    echo "$total"
}

cost() {
    local rate=10000 seconds=20
    while [ $# -gt 0 ]; do
        case "$1" in
            --rate) rate=${2:?--rate needs N}; shift ;;
            --seconds) seconds=${2:?--seconds needs S}; shift ;;
            *) say "console.sh cost: unknown argument '$1'"; exit 2 ;;
        esac
        shift
    done
    need_browser
    "$bin/lifeline" broker --control 'tcp://127.0.0.1:*' --bus 'tcp://127.0.0.1:*' >"$work/broker.out" 2>"$work/broker.log" &
    local broker=$!
    pids+=("$broker")
    local control
    control=$(ready_line "$work/broker.out" "READY " | sed 's/.*control=\([^ ]*\).*/\1/')
    # A subscriber to every event, as a running system has: the bus really carries the load.
    "$bin/lifeline" tail --broker "$control" >/dev/null 2>"$work/tail.log" &
    pids+=($!)
    ready_line "$work/tail.log" "# tailing" >/dev/null
    "$bin/lifeline" console --broker "$control" --listen 127.0.0.1:0 >"$work/console.out" 2>"$work/console.log" &
    local console=$!
    pids+=("$console")
    local url
    url=$(ready_line "$work/console.out" "READY " | cut -d' ' -f2)
    local phases=4 warm=3
    local total=$(((seconds + warm + 12) * phases + 10))
    "$bin/lifeline-bench" blast --broker "$control" --rate "$rate" --count $((rate * total)) \
        --event com.example.load >"$work/blast.out" &
    pids+=($!)
    sleep 2
    printf '%-10s %12s %12s %12s %14s\n' "page" "broker CPU" "console CPU" "browser CPU" "/api/state p50"
    local phase page chromium b0 c0 r0 b1 c1 r1 t0 t1 times
    declare -A sums=([off]=0 [on]=0)
    for phase in $(seq 1 $phases); do
        page=off
        [ $((phase % 2)) -eq 0 ] && page=on
        chromium=
        if [ $page = on ]; then
            chromium --headless=new --no-sandbox --disable-gpu --user-data-dir="$work/chromium" "$url" \
                >/dev/null 2>&1 &
            chromium=$!
        fi
        sleep "$warm"
        b0=$(cpu_seconds "$broker"); c0=$(cpu_seconds "$console"); r0=$(browser_seconds); t0=$(date +%s.%N)
        times=()
        for _ in $(seq 1 "$seconds"); do
            times+=("$(curl -s -o /dev/null -w '%{time_total}' "${url}api/state")")
            sleep 1
        done
        b1=$(cpu_seconds "$broker"); c1=$(cpu_seconds "$console"); r1=$(browser_seconds); t1=$(date +%s.%N)
        local median
        median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{ a[NR] = $1 } END { printf "%.1f ms", a[int((NR + 1) / 2)] * 1000 }')
        local share
        share=$(awk -v a="$b0" -v b="$b1" -v s="$(awk -v x="$t0" -v y="$t1" 'BEGIN { print y - x }')" 'BEGIN { printf "%.2f", (b - a) / s * 100 }')
        sums[$page]=$(awk -v a="${sums[$page]}" -v b="$share" 'BEGIN { print a + b }')
        printf '%-10s %11s%% %11s%% %11s%% %14s\n' "$page" "$share" \
            "$(awk -v a="$c0" -v b="$c1" -v s="$(awk -v x="$t0" -v y="$t1" 'BEGIN { print y - x }')" 'BEGIN { printf "%.2f", (b - a) / s * 100 }')" \
            "$(awk -v a="$r0" -v b="$r1" -v s="$(awk -v x="$t0" -v y="$t1" 'BEGIN { print y - x }')" 'BEGIN { printf "%.2f", (b - a) / s * 100 }')" "$median"
        if [ -n "$chromium" ]; then
            pkill -f "user-data-dir=$work/chromium" 2>/dev/null || true
            wait "$chromium" 2>/dev/null || true
        fi
        # The console keeps its bus subscription 10 s after the last page leaves.
        sleep 12
    done
    awk -v off="${sums[off]}" -v on="${sums[on]}" -v n=$((phases / 2)) -v rate="$rate" 'BEGIN {
        printf "broker at %d events/s: %.2f%% of a core without a page, %.2f%% with one open: the console adds %.2f%% of a core\n",
            rate, off / n, on / n, (on - off) / n }'
    wait "${pids[-1]}" 2>/dev/null || true
    cat "$work/blast.out"
}

screenshot() {
    local file=${1:?screenshot needs a FILE} url=${2:-}
    need_browser
    if [ -z "$url" ]; then
        url=$(sed -n 's/^READY //p' "$lifeline_root/run/console.log" 2>/dev/null | head -1)
        [ -n "$url" ] || { say "console.sh: no console running (deploy/launch.sh starts one); give its URL"; exit 1; }
    fi
    chromedriver --port=0 >"$work/driver.log" 2>&1 &
    pids+=($!)
    local port
    port=$(ready_line "$work/driver.log" "ChromeDriver was started" | sed 's/.*port \([0-9]*\)\..*/\1/')
    local driver="http://localhost:$port"
    local session
    session=$(curl -s -X POST "$driver/session" -H 'Content-Type: application/json' -d "{\"capabilities\":
        {\"alwaysMatch\": {\"goog:chromeOptions\": {\"args\": [\"--headless=new\", \"--no-sandbox\",
        \"--disable-gpu\", \"--window-size=1400,1500\", \"--user-data-dir=$work/chromium\"]}}}}" |
        grep -o '"sessionId":"[^"]*"' | cut -d'"' -f4)
    [ -n "$session" ] || { say "console.sh: chromedriver made no session"; exit 1; }
    curl -s -X POST "$driver/session/$session/url" -H 'Content-Type: application/json' \
        -d "{\"url\": \"$url\"}" >/dev/null
    # Let the views, the rates and the tail fill in.
    sleep 6
    curl -s "$driver/session/$session/screenshot" | sed 's/^{"value":"//; s/"}$//' | base64 -d >"$file"
    curl -s -X DELETE "$driver/session/$session" >/dev/null
    say "console.sh: wrote $file"
}

case "${1:-}" in
    cost) shift; cost "$@" ;;
    screenshot) shift; screenshot "$@" ;;
    *) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac

#!/usr/bin/env bash
# The web console, measured and pictured (release build):
#   bench/console.sh cost [--rate N] [--seconds S]   the broker's CPU with no page, with a page and its
#                                                    tail, and with a page whose tail is hidden, the bus
#                                                    at N events/s (default 10000), phases of S seconds
#                                                    (default 20), in the order A B C C B A
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

# Starts chromedriver; sets driver to its URL.
driver=
start_driver() {
    chromedriver --port=0 >"$work/driver.log" 2>&1 &
    pids+=($!)
    local port
    port=$(ready_line "$work/driver.log" "ChromeDriver was started" | sed 's/.*port \([0-9]*\)\..*/\1/')
    driver="http://localhost:$port"
}

# Opens headless Chromium at $2 through the driver at $1; prints the session id.
open_page() {
    local session
    session=$(curl -s -X POST "$1/session" -H 'Content-Type: application/json' -d "{\"capabilities\":
        {\"alwaysMatch\": {\"goog:chromeOptions\": {\"args\": [\"--headless=new\", \"--no-sandbox\",
        \"--disable-gpu\", \"--window-size=1400,1500\", \"--user-data-dir=$work/chromium\"]}}}}" |
        grep -o '"sessionId":"[^"]*"' | cut -d'"' -f4)
    [ -n "$session" ] || { say "console.sh: chromedriver made no session"; exit 1; }
    curl -s -X POST "$1/session/$session/url" -H 'Content-Type: application/json' -d "{\"url\": \"$2\"}" >/dev/null
    echo "$session"
}

# Clicks the element matching CSS selector $3 in session $2 of the driver at $1.
click() {
    local element
    element=$(curl -s -X POST "$1/session/$2/element" -H 'Content-Type: application/json' \
        -d "{\"using\": \"css selector\", \"value\": \"$3\"}" | grep -o '"element-[^"]*":"[^"]*"' | cut -d'"' -f4)
    [ -n "$element" ] || { say "console.sh: no element $3 on the page"; exit 1; }
    curl -s -X POST "$1/session/$2/element/$element/click" -H 'Content-Type: application/json' -d '{}' >/dev/null
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
    start_driver
    # Conditions: no page; a page with its tail open; a page whose tail was hidden (measured after
    # the console's 10 s grace, once it has left the bus). In the order A B C C B A, so a drift of
    # the broker's CPU over the run (its journal filling) weighs on each condition alike.
    local conditions=(none tail hidden hidden tail none) warm=3 grace=12
    local total=$(((seconds + warm + 2 * grace) * ${#conditions[@]} + 10))
    "$bin/lifeline-bench" blast --broker "$control" --rate "$rate" --count $((rate * total)) \
        --event com.example.load >"$work/blast.out" &
    pids+=($!)
    sleep 2
    printf '%-10s %12s %12s %12s %14s\n' "page" "broker CPU" "console CPU" "browser CPU" "/api/state p50"
    local page session b0 c0 r0 b1 c1 r1 t0 t1 times span
    declare -A sums=([none]=0 [tail]=0 [hidden]=0)
    for page in "${conditions[@]}"; do
        session=
        if [ "$page" != none ]; then session=$(open_page "$driver" "$url"); fi
        sleep "$warm"
        if [ "$page" = hidden ]; then
            click "$driver" "$session" "#tail-toggle"
            sleep "$grace"
        fi
        b0=$(cpu_seconds "$broker"); c0=$(cpu_seconds "$console"); r0=$(browser_seconds); t0=$(date +%s.%N)
        times=()
        for _ in $(seq 1 "$seconds"); do
            times+=("$(curl -s -o /dev/null -w '%{time_total}' "${url}api/state")")
            sleep 1
        done
        b1=$(cpu_seconds "$broker"); c1=$(cpu_seconds "$console"); r1=$(browser_seconds); t1=$(date +%s.%N)
        span=$(awk -v x="$t0" -v y="$t1" 'BEGIN { print y - x }')
        local median share
        median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{ a[NR] = $1 } END { printf "%.1f ms", a[int((NR + 1) / 2)] * 1000 }')
        share=$(awk -v a="$b0" -v b="$b1" -v s="$span" 'BEGIN { printf "%.2f", (b - a) / s * 100 }')
        sums[$page]=$(awk -v a="${sums[$page]}" -v b="$share" 'BEGIN { print a + b }')
        printf '%-10s %11s%% %11s%% %11s%% %14s\n' "$page" "$share" \
            "$(awk -v a="$c0" -v b="$c1" -v s="$span" 'BEGIN { printf "%.2f", (b - a) / s * 100 }')" \
            "$(awk -v a="$r0" -v b="$r1" -v s="$span" 'BEGIN { printf "%.2f", (b - a) / s * 100 }')" "$median"
        if [ -n "$session" ]; then curl -s -X DELETE "$driver/session/$session" >/dev/null; fi
        pkill -f "user-data-dir=$work/chromium" 2>/dev/null || true
        # The console keeps its bus subscription 10 s after the last tail closes.
        sleep "$grace"
    done
    awk -v none="${sums[none]}" -v tail="${sums[tail]}" -v hidden="${sums[hidden]}" -v rate="$rate" 'BEGIN {
        printf "broker at %d events/s, %% of a core: %.2f without a page, %.2f with a page and its tail, %.2f with a page whose tail is hidden\n",
            rate, none / 2, tail / 2, hidden / 2
        printf "a page adds %.2f points with its tail open, %.2f with it hidden\n", (tail - none) / 2, (hidden - none) / 2 }'
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
    local session
    start_driver
    session=$(open_page "$driver" "$url")
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

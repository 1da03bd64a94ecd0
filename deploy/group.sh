#!/usr/bin/env bash
# A replicated broker group on this machine: a real etcd (Debian's etcd-server), then `lifeline up`
# with deploy/group.json: three brokers of group "demo" (a, b, c) and the example services, all
# supervised in the background, logs and pids under run/group/. One broker leads; the others hold
# a copy and take over when it dies; the supervisor starts a killed one again.
#
#   deploy/group.sh [start]        build (release), start etcd, then the group and the services
#   deploy/group.sh stop           stop the services and the brokers (lifeline down), then etcd
#   deploy/group.sh status         which processes run, who leads
#   deploy/group.sh kill-leader    kill -9 the leading broker (lifeline up starts it again)
# LIFELINE_CONFIGURATION=debug uses the debug build. Ports: etcd 127.0.0.1:2389; brokers a, b, c control 7310–7312, bus 7320–7322, group 7330–7332.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

action=${1:-start}
run_dir=${LIFELINE_RUN_DIR:-$lifeline_root/run}/group
configuration=${LIFELINE_CONFIGURATION:-release}
bin="$lifeline_root/.build/$configuration"
etcd_url=http://127.0.0.1:2389
topology="$lifeline_root/deploy/group.json"
members=(a b c)
brokers=tcp://127.0.0.1:7310,tcp://127.0.0.1:7311,tcp://127.0.0.1:7312
services=(push analytics url gateway shell)
# etcd's pid file is kept below the run directory, not in it: `lifeline up` takes every *.pid there
# for a process an earlier run of its own left behind.
etcd_pid="$run_dir/etcd-server/etcd.pid"

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# Waits up to 20 s for a line matching $2 in the log of $1.
wait_for() {
    local waited=0
    until grep -q "$2" "$run_dir/$1.log" 2>/dev/null; do
        if [ $waited -ge 400 ]; then
            say "error: $1 did not print '$2' within 20 s (see $run_dir/$1.log)"
            exit 1
        fi
        sleep 0.05
        waited=$((waited + 1))
    done
}

leader() {
    local name
    for name in "${members[@]}"; do
        alive "$run_dir/broker-$name.pid" || continue
        if grep -E ': (READY|STANDBY) ' "$run_dir/broker-$name.log" | tail -1 | grep -q ': READY '; then
            echo "$name"
            return 0
        fi
    done
    return 1
}

start_all() {
    ensure_prerequisites
    ensure_etcd
    command -v etcd >/dev/null || { say "error: etcd is not installed (apt-get install -y etcd-server)"; exit 1; }
    build_package "$configuration"
    mkdir -p "$run_dir/etcd-server"
    if [ -f "$run_dir/etcd.pid" ]; then mv "$run_dir/etcd.pid" "$etcd_pid"; fi  # an older layout
    if ! alive "$etcd_pid"; then
        : >"$run_dir/etcd.log"  # the readiness line waited for below must be this run's
        nohup etcd --name demo --data-dir "$run_dir/etcd" --listen-client-urls "$etcd_url" \
            --advertise-client-urls "$etcd_url" --listen-peer-urls http://127.0.0.1:2390 \
            --initial-advertise-peer-urls http://127.0.0.1:2390 --initial-cluster demo=http://127.0.0.1:2390 \
            >>"$run_dir/etcd.log" 2>&1 &
        echo $! >"$etcd_pid"
    fi
    wait_for etcd "ready to serve client requests"
    "$bin/lifeline" up --detach --topology "$topology" --run-dir "$run_dir"
    cat <<TXT

A broker group is running: etcd on $etcd_url, brokers a, b, c (leader: $(leader || echo "being elected")),
services ${services[*]}, supervised by lifeline up ($topology). Logs and pids: $run_dir

Try next:
  export PATH="$bin:\$PATH" LIFELINE_BROKER=$brokers
  lifeline services                      # asked of whichever member answers; a standby points to the leader
  lifeline publish openURL url=app://transfer/pay
  deploy/group.sh kill-leader            # within about a second a standby leads, or the restarted member
  lifeline publish openURL url=app://topup   # accepted by the new leader (the CLI waits out the election)
  lifeline status                        # the same epoch; the sequence goes on
  deploy/group.sh status                 # the killed broker is back (lifeline up started it again)
  deploy/group.sh stop
TXT
}

stop_all() {
    [ -x "$bin/lifeline" ] && "$bin/lifeline" down --run-dir "$run_dir" || true
    if [ -f "$run_dir/etcd.pid" ]; then mkdir -p "$run_dir/etcd-server" && mv "$run_dir/etcd.pid" "$etcd_pid"; fi
    if alive "$etcd_pid"; then kill "$(cat "$etcd_pid")" 2>/dev/null || true; fi
    local waited=0
    while alive "$etcd_pid" && [ $waited -lt 100 ]; do sleep 0.05; waited=$((waited + 1)); done
    rm -f "$etcd_pid"
    say "stopped (state kept in $run_dir)"
}

case "$action" in
    start) start_all ;;
    stop) stop_all ;;
    status)
        if alive "$etcd_pid"; then say "  etcd: running (pid $(cat "$etcd_pid"))"; else say "  etcd: not running"; fi
        for name in up broker-a broker-b broker-c "${services[@]}"; do
            if alive "$run_dir/$name.pid"; then say "  $name: running (pid $(cat "$run_dir/$name.pid"))"; else say "  $name: not running"; fi
        done
        say "  leader: $(leader || echo none)"
        ;;
    kill-leader)
        name=$(leader) || { say "no broker leads"; exit 1; }
        kill -9 "$(cat "$run_dir/broker-$name.pid")"
        say "killed broker $name (kill -9); lifeline up starts it again"
        ;;
    -h | --help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' ;;
    *) say "group.sh: unknown action '$action' (try --help)"; exit 2 ;;
esac

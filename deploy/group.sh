#!/usr/bin/env bash
# A replicated broker group on this machine: a real etcd (Debian's etcd-server), three brokers of
# group "demo" (a, b, c) and the example services, all in the background, logs and pids under
# run/group/. One broker leads; the others hold a copy and take over when it dies.
#
#   deploy/group.sh [start]        build (release), start etcd, the three brokers and the services
#   deploy/group.sh stop           stop the services, the brokers, then etcd
#   deploy/group.sh status         which processes run, who leads
#   deploy/group.sh kill-leader    kill -9 the leading broker (start it again with 'start')
# LIFELINE_CONFIGURATION=debug uses the debug build. Ports: etcd 127.0.0.1:2389; brokers a, b, c control 7310–7312, bus 7320–7322, group 7330–7332.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

action=${1:-start}
run_dir=${LIFELINE_RUN_DIR:-$lifeline_root/run}/group
configuration=${LIFELINE_CONFIGURATION:-release}
bin="$lifeline_root/.build/$configuration"
etcd_url=http://127.0.0.1:2389
members=(a b c)
brokers=tcp://127.0.0.1:7310,tcp://127.0.0.1:7311,tcp://127.0.0.1:7312
services=(lifeline-push lifeline-analytics lifeline-url lifeline-gateway)

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# Starts $2… in the background as $1 (pid and log in the run directory) unless it runs already.
launch() {
    local name=$1
    shift
    alive "$run_dir/$name.pid" && return 0
    nohup "$@" >>"$run_dir/$name.log" 2>&1 &
    echo $! >"$run_dir/$name.pid"
}

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

start_member() {
    local index=$1 name=${members[$1]}
    launch "broker-$name" "$bin/lifeline" broker --group demo --member "$name" --members a,b,c \
        --etcd "$etcd_url" --state-dir "$run_dir/state-$name" --launcher launcher \
        --control "tcp://127.0.0.1:731$index" --bus "tcp://127.0.0.1:732$index" \
        --replicate "tcp://127.0.0.1:733$index" --heartbeat-interval 250
}

leader() {
    local name
    for name in "${members[@]}"; do
        alive "$run_dir/broker-$name.pid" || continue
        if grep -E '^(READY|STANDBY) ' "$run_dir/broker-$name.log" | tail -1 | grep -q '^READY '; then
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
    mkdir -p "$run_dir"
    launch etcd etcd --name demo --data-dir "$run_dir/etcd" --listen-client-urls "$etcd_url" \
        --advertise-client-urls "$etcd_url" --listen-peer-urls http://127.0.0.1:2390 \
        --initial-advertise-peer-urls http://127.0.0.1:2390 --initial-cluster demo=http://127.0.0.1:2390
    wait_for etcd "ready to serve client requests"
    for index in 0 1 2; do start_member "$index"; done
    wait_for broker-a "^\(READY\|STANDBY\) "
    wait_for broker-b "^\(READY\|STANDBY\) "
    wait_for broker-c "^\(READY\|STANDBY\) "
    for service in "${services[@]}"; do
        launch "$service" "$bin/$service" --broker "$brokers"
        wait_for "$service" "^READY service="
    done
    cat <<TXT

A broker group is running: etcd on $etcd_url, brokers a, b, c (leader: $(leader || echo "being elected")),
services ${services[*]}. Logs and pids: $run_dir

Try next:
  export PATH="$bin:\$PATH" LIFELINE_BROKER=$brokers
  lifeline services                      # asked of whichever member answers; a standby points to the leader
  lifeline publish didEnterBackground
  deploy/group.sh kill-leader            # a standby takes over within about a second
  lifeline publish willEnterForeground   # accepted by the new leader
  lifeline status                        # the same epoch; the sequence goes on
  deploy/group.sh start                  # the killed broker comes back as a standby
  deploy/group.sh stop
TXT
}

stop_all() {
    local name
    for name in "${services[@]}" broker-a broker-b broker-c etcd; do
        if alive "$run_dir/$name.pid"; then kill "$(cat "$run_dir/$name.pid")" 2>/dev/null || true; fi
    done
    for name in "${services[@]}" broker-a broker-b broker-c etcd; do
        local waited=0
        while alive "$run_dir/$name.pid" && [ $waited -lt 100 ]; do sleep 0.05; waited=$((waited + 1)); done
        rm -f "$run_dir/$name.pid"
    done
    say "stopped (state kept in $run_dir)"
}

case "$action" in
    start) start_all ;;
    stop) stop_all ;;
    status)
        for name in etcd broker-a broker-b broker-c "${services[@]}"; do
            if alive "$run_dir/$name.pid"; then say "  $name: running (pid $(cat "$run_dir/$name.pid"))"; else say "  $name: not running"; fi
        done
        say "  leader: $(leader || echo none)"
        ;;
    kill-leader)
        name=$(leader) || { say "no broker leads"; exit 1; }
        kill -9 "$(cat "$run_dir/broker-$name.pid")"
        rm -f "$run_dir/broker-$name.pid"
        say "killed broker $name (kill -9)"
        ;;
    -h | --help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//' ;;
    *) say "group.sh: unknown action '$action' (try --help)"; exit 2 ;;
esac

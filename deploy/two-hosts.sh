#!/usr/bin/env bash
# Two hosts on one machine, over CURVE: network namespaces lifeline-a (the broker, 10.77.0.1) and
# lifeline-b (the five example services and your CLI, 10.77.0.2), joined by a veth pair. Each
# process has its own key pair; deploy/two-hosts.policy.json says what each key may do.
#
#   deploy/two-hosts.sh [start]   build (release), make keys and hosts, start everything, boot
#   deploy/two-hosts.sh cut|mend  take the link between the hosts down / up again
#   deploy/two-hosts.sh reload    re-read the policy (SIGHUP to the broker)
#   deploy/two-hosts.sh stop      stop the services, then the broker; remove the namespaces
# Needs root (ip netns). Keys, logs and state live in run/two-hosts/ (LIFELINE_RUN_DIR overrides).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

action=${1:-start}
case "$action" in -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
[ "$(id -u)" = 0 ] || { say "two-hosts.sh needs root (ip netns)"; exit 1; }
command -v ip >/dev/null || { say "two-hosts.sh needs iproute2 (apt-get install -y iproute2)"; exit 1; }

run_dir=${LIFELINE_RUN_DIR:-$lifeline_root/run}/two-hosts
keys="$run_dir/keys"
bin="$lifeline_root/.build/release"
control=tcp://10.77.0.1:7200
services=(push analytics url gateway shell)

on() { local host=$1; shift; ip netns exec "lifeline-$host" "$@"; }

stop_all() {
    # 'ip netns exec' may run the program as its child: stop by namespace, not by the pid we
    # started. The services' host first (each unregisters cleanly), then the broker's.
    for host in b a; do
        local pids
        pids=$(ip netns pids "lifeline-$host" 2>/dev/null | tr '\n' ' ' || true)
        [ -n "${pids// /}" ] || continue
        # shellcheck disable=SC2086
        kill -TERM $pids 2>/dev/null || true
        for _ in $(seq 50); do
            [ -n "$(ip netns pids "lifeline-$host" 2>/dev/null)" ] || break
            sleep 0.1
        done
        pids=$(ip netns pids "lifeline-$host" 2>/dev/null | tr '\n' ' ' || true)
        # shellcheck disable=SC2086
        [ -z "${pids// /}" ] || kill -KILL $pids 2>/dev/null || true
        say "  stopped host $host"
    done
    rm -f "$run_dir"/*.pid
    ip netns del lifeline-a 2>/dev/null || true
    ip netns del lifeline-b 2>/dev/null || true
}

start_all() {
    ensure_prerequisites
    say "building (release) ..."
    (cd "$lifeline_root" && swift build -c release) || { say "error: the build failed"; exit 1; }
    stop_all >/dev/null 2>&1
    mkdir -p "$keys"
    for name in broker ops "${services[@]}"; do
        [ -f "$keys/$name.key" ] || "$bin/lifeline" keys new "$name" --dir "$keys" >/dev/null
    done
    cp "$lifeline_root/deploy/two-hosts.policy.json" "$keys/policy.json"
    "$bin/lifeline" policy check "$keys/policy.json" >/dev/null

    say "making the hosts: lifeline-a (10.77.0.1) and lifeline-b (10.77.0.2) ..."
    ip netns add lifeline-a
    ip netns add lifeline-b
    ip link add lifeline-va type veth peer name lifeline-vb
    ip link set lifeline-va netns lifeline-a
    ip link set lifeline-vb netns lifeline-b
    ip -n lifeline-a addr add 10.77.0.1/24 dev lifeline-va
    ip -n lifeline-b addr add 10.77.0.2/24 dev lifeline-vb
    for host in a b; do ip -n "lifeline-$host" link set lo up; ip -n "lifeline-$host" link set "lifeline-v$host" up; done

    say "starting the broker on host a (CURVE, policy $keys/policy.json) ..."
    on a "$bin/lifeline" broker --control "$control" --bus tcp://10.77.0.1:7201 --key "$keys/broker.key" \
        --policy "$keys/policy.json" --state-dir "$run_dir/state" --launcher launcher \
        >"$run_dir/broker.out" 2>"$run_dir/broker.log" &
    echo $! >"$run_dir/broker.pid"
    for _ in $(seq 150); do grep -q '^READY ' "$run_dir/broker.out" 2>/dev/null && break; sleep 0.1; done
    grep -q '^READY ' "$run_dir/broker.out" || { say "error: the broker did not start:"; tail "$run_dir/broker.log"; exit 1; }

    for name in "${services[@]}"; do
        on b "$bin/lifeline-$name" --broker "$control" --key "$keys/$name.key" --broker-key "$keys/broker.pub" \
            >"$run_dir/$name.out" 2>"$run_dir/$name.log" &
        echo $! >"$run_dir/$name.pid"
    done
    for name in "${services[@]}"; do
        for _ in $(seq 300); do grep -q '^READY ' "$run_dir/$name.out" 2>/dev/null && break; sleep 0.1; done
        grep -q '^READY ' "$run_dir/$name.out" && say "  ✓ $name registered from host b" || say "  ✗ $name did not register: $(tail -n 1 "$run_dir/$name.log")"
    done
    local cli=(ip netns exec lifeline-b "$bin/lifeline")
    local auth=(--broker "$control" --key "$keys/ops.key" --broker-key "$keys/broker.pub")
    "${cli[@]}" dispatch didFinishLaunching "${auth[@]}" >/dev/null
    "${cli[@]}" boot wait "${auth[@]}" 2>/dev/null | tail -n 1 || true
    cat >&2 <<MSG

Two hosts are up. A client on host b (the CLI, with the ops key):
  ip netns exec lifeline-b $bin/lifeline services ${auth[*]}
  ip netns exec lifeline-b $bin/lifeline apps action login signIn '{"user":"ana","password":"secret"}' ${auth[*]}
Without a key, or with one the policy does not list, nothing gets through:
  ip netns exec lifeline-b $bin/lifeline status --broker $control --timeout 1000
Logs: $run_dir/*.log. 'deploy/two-hosts.sh cut' / 'mend' takes the link down / up; 'stop' ends it.
MSG
}

case "$action" in
    start) start_all ;;
    stop) stop_all ;;
    cut) ip -n lifeline-a link set lifeline-va down; say "link down" ;;
    mend) ip -n lifeline-a link set lifeline-va up; say "link up" ;;
    reload) kill -HUP "$(cat "$run_dir/broker.pid")"; say "sent SIGHUP to the broker" ;;
    *) say "two-hosts.sh: unknown action '$action' (try --help)"; exit 2 ;;
esac

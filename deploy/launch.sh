#!/usr/bin/env bash
# Launches the broker and the services of a topology, in the background, logs and pids under run/.
#
#   deploy/launch.sh [start]     build (release), start everything, wait until all are registered
#   deploy/launch.sh stop        stop the services, then the broker (SIGTERM, then SIGKILL after 5 s)
#   deploy/launch.sh status      which processes run, and the broker's registry
#   deploy/launch.sh restart
# Options: --topology FILE (default deploy/topology.json), --debug (debug build).
# LIFELINE_RUN_DIR overrides the run directory (default: run/ in the repository).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"

action=start
topology="$lifeline_root/deploy/topology.json"
configuration=release
while [ $# -gt 0 ]; do
    case "$1" in
        start|stop|status|restart) action=$1 ;;
        --topology) topology=${2:?--topology needs a FILE}; shift ;;
        --debug) configuration=debug ;;
        -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) say "launch.sh: unknown argument '$1' (try --help)"; exit 2 ;;
    esac
    shift
done

run_dir=${LIFELINE_RUN_DIR:-$lifeline_root/run}
bin="$lifeline_root/.build/$configuration"

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

stop_all() {
    local stopped=0
    shopt -s nullglob
    local pidfiles=("$run_dir"/*.pid)
    # Services first, the broker last, so services unregister cleanly.
    local ordered=()
    for file in "${pidfiles[@]}"; do [ "$(basename "$file")" = broker.pid ] || ordered+=("$file"); done
    [ -f "$run_dir/broker.pid" ] && ordered+=("$run_dir/broker.pid")
    for file in "${ordered[@]}"; do
        local name pid
        name=$(basename "$file" .pid)
        pid=$(cat "$file")
        if kill -0 "$pid" 2>/dev/null; then
            kill -TERM "$pid" 2>/dev/null || true
            for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
            if kill -0 "$pid" 2>/dev/null; then
                say "  $name (pid $pid) did not stop within 5 s; killing it"
                kill -KILL "$pid" 2>/dev/null || true
            fi
            say "  stopped $name (pid $pid)"
            stopped=$((stopped + 1))
        fi
        rm -f "$file"
    done
    [ $stopped -eq 0 ] && say "nothing was running (run directory $run_dir)"
    return 0
}

show_status() {
    shopt -s nullglob
    local any=0
    for file in "$run_dir"/*.pid; do
        any=1
        if alive "$file"; then say "  $(basename "$file" .pid): running (pid $(cat "$file"))"; else say "  $(basename "$file" .pid): not running"; fi
    done
    [ $any -eq 0 ] && { say "nothing launched (run directory $run_dir)"; return 0; }
    if alive "$run_dir/broker.pid" && [ -f "$run_dir/broker.endpoint" ]; then
        "$bin/lifeline" services --broker "$(cat "$run_dir/broker.endpoint")" || true
    fi
}

wait_for_line() { # file pattern seconds
    local deadline=$((SECONDS + $3))
    while [ $SECONDS -lt $deadline ]; do
        grep -q "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

start_all() {
    ensure_prerequisites
    if alive "$run_dir/broker.pid"; then
        say "already running (broker pid $(cat "$run_dir/broker.pid")); use 'deploy/launch.sh restart' or 'stop'"
        show_status
        return 0
    fi
    say "building ($configuration) ..."
    set +e
    cd "$lifeline_root"
    swift build -c "$configuration" 2>&1 | grep -v "prohibited flag"
    local status=${PIPESTATUS[0]}
    set -e
    [ "$status" -eq 0 ] || { say "error: the build failed (status $status)"; exit 1; }

    local plan
    plan=$("$bin/lifeline" topology "$topology" --shell) || exit 1
    mkdir -p "$run_dir"
    rm -f "$run_dir"/*.pid

    local control bus broker_args
    read -r _ control bus broker_args <<<"$(head -n 1 <<<"$plan")"
    say "starting the broker (control $control, bus $bus) ..."
    : >"$run_dir/broker.out"
    # shellcheck disable=SC2086
    nohup "$bin/lifeline" broker --control "$control" --bus "$bus" --state-dir "$run_dir/state" --topology "$topology" $broker_args \
        >"$run_dir/broker.out" 2>"$run_dir/broker.log" &
    echo $! >"$run_dir/broker.pid"
    if ! wait_for_line "$run_dir/broker.out" '^READY ' 15; then
        say "error: the broker did not become ready; its log ($run_dir/broker.log):"
        tail -n 20 "$run_dir/broker.log" >&2
        stop_all
        exit 1
    fi
    control=$(sed -n 's/^READY control=\([^ ,]*\).*/\1/p' "$run_dir/broker.out")
    echo "$control" >"$run_dir/broker.endpoint"
    say "  broker ready: $(head -n 1 "$run_dir/broker.out")"

    local names=()
    while read -r kind name executable args; do
        [ "$kind" = service ] || continue
        local path=$executable
        [[ "$path" = /* ]] || path="$bin/$executable"
        [ -x "$path" ] || { say "error: $path not found (service $name)"; stop_all; exit 1; }
        # shellcheck disable=SC2086
        nohup "$path" --broker "$control" --name "$name" $args >"$run_dir/$name.out" 2>"$run_dir/$name.log" &
        echo $! >"$run_dir/$name.pid"
        names+=("$name")
        say "  started $name (pid $!)"
    done <<<"$plan"

    say "waiting for ${#names[@]} services to register ..."
    local pending=("${names[@]}")
    local deadline=$((SECONDS + 30))
    while [ ${#pending[@]} -gt 0 ] && [ $SECONDS -lt $deadline ]; do
        local still=()
        for name in "${pending[@]}"; do
            if grep -q '^READY ' "$run_dir/$name.out" 2>/dev/null; then
                say "  ✓ $name registered"
            elif ! alive "$run_dir/$name.pid"; then
                say "error: $name exited; its log ($run_dir/$name.log):"
                tail -n 10 "$run_dir/$name.log" >&2
                stop_all
                exit 1
            else
                still+=("$name")
            fi
        done
        pending=("${still[@]+"${still[@]}"}")
        [ ${#pending[@]} -gt 0 ] && sleep 0.2
    done
    if [ ${#pending[@]} -gt 0 ]; then
        say "error: not registered after 30 s: ${pending[*]} (logs in $run_dir)"
        stop_all
        exit 1
    fi

    say "launching the application (didFinishLaunching) and booting ..."
    "$bin/lifeline" dispatch didFinishLaunching --broker "$control" >/dev/null || say "warning: didFinishLaunching was refused (see lifeline status)"
    if ! "$bin/lifeline" boot wait --broker "$control" >&2; then
        say "warning: the boot did not finish cleanly; see 'lifeline boot report' and $run_dir/broker.log"
    fi

    cat <<TXT

Lifeline is running: broker on $control, ${#names[@]} services (${names[*]}).
Logs and pids: $run_dir

Try next:
  export PATH="$bin:\$PATH" LIFELINE_BROKER=$control
  lifeline services                                    # the registry
  lifeline boot report                                 # blame list and critical chain of the boot
  lifeline boot report --svg $run_dir/boot.svg          # its timeline, for a browser
  lifeline tail &                                      # watch the bus
  lifeline publish didRegisterForRemoteNotifications deviceToken=abc123
  lifeline publish openURL url=app://transfer/pay      # only the url service sees it
  lifeline lookup push
  lifeline call url resolve '{"url": "app://topup"}'
  lifeline call push status
  lifeline apps list                                   # the Launcher started login (nobody signed in)
  lifeline apps action login signIn '{"user": "ana", "password": "secret"}'
  lifeline apps list                                   # the Launcher replaced login with home
  lifeline call account profile                        # served while signed in (registered at run time)
  lifeline apps action home signOut
  deploy/launch.sh stop
TXT
}

case "$action" in
    start) start_all ;;
    stop) stop_all ;;
    status) show_status ;;
    restart) stop_all; start_all ;;
esac

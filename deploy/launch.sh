#!/usr/bin/env bash
# Launches the broker and the services of a topology, in the background, logs and pids under run/:
# a thin wrapper over 'lifeline up --detach' (which supervises them) and 'lifeline down'; then the
# live web console ('lifeline console', on 127.0.0.1:7290 or $LIFELINE_CONSOLE_PORT).
#
#   deploy/launch.sh [start]     build (release), start everything, wait until all are registered, boot
#   deploy/launch.sh stop        stop the services in reverse start order, then the broker
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
control=$( { [ -x "$bin/lifeline" ] && "$bin/lifeline" topology "$topology" --shell 2>/dev/null | awk '$1 == "broker" { print $2 }'; } || true )

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

stop_console() {
    if alive "$run_dir/console.pid"; then kill "$(cat "$run_dir/console.pid")" 2>/dev/null || true; fi
    rm -f "$run_dir/console.pid"
}

# The live web console (a client of the broker), on loopback; its READY line names the page.
start_console() {
    stop_console
    nohup "$bin/lifeline" console --broker "$control" --listen "127.0.0.1:${LIFELINE_CONSOLE_PORT:-7290}" \
        >"$run_dir/console.log" 2>&1 &
    echo $! >"$run_dir/console.pid"
    local waited=0
    until grep -q '^READY ' "$run_dir/console.log" 2>/dev/null; do
        if ! alive "$run_dir/console.pid" || [ $waited -ge 100 ]; then
            say "warning: the console did not start (see $run_dir/console.log)"
            console_url="(not running: see $run_dir/console.log)"
            return 0
        fi
        sleep 0.05
        waited=$((waited + 1))
    done
    console_url=$(sed -n 's/^READY //p' "$run_dir/console.log" | head -1)
}

stop_all() {
    stop_console
    if [ -x "$bin/lifeline" ]; then
        "$bin/lifeline" down --run-dir "$run_dir"
    else
        say "nothing was running (run directory $run_dir)"
    fi
}

show_status() {
    shopt -s nullglob
    local any=0
    for file in "$run_dir"/*.pid; do
        any=1
        if alive "$file"; then say "  $(basename "$file" .pid): running (pid $(cat "$file"))"; else say "  $(basename "$file" .pid): not running"; fi
    done
    [ $any -eq 0 ] && { say "nothing launched (run directory $run_dir)"; return 0; }
    if alive "$run_dir/up.pid"; then
        "$bin/lifeline" services --broker "$control" || true
    fi
}

start_all() {
    ensure_prerequisites
    build_package "$configuration"

    # The supervisor starts the broker, then the services in dependency order, restarts what dies,
    # and stops everything in reverse order on 'lifeline down'.
    local up
    if ! up=$("$bin/lifeline" up --detach --topology "$topology" --run-dir "$run_dir"); then
        exit 1
    fi
    control=$(sed -n 's/^UP control=\([^ ]*\).*/\1/p' <<<"$up")
    local names=()
    # One line per process ('cart', 'cart@2', …): each service named once.
    while read -r kind name _; do [ "$kind" = service ] && [ "${name%@*}" = "$name" ] && names+=("$name"); done \
        <<<"$("$bin/lifeline" topology "$topology" --shell)"
    say "  up: $up (logs and pids in $run_dir)"

    say "launching the application (didFinishLaunching) and booting ..."
    "$bin/lifeline" dispatch didFinishLaunching --broker "$control" >/dev/null || say "warning: didFinishLaunching was refused (see lifeline status)"
    if ! "$bin/lifeline" boot wait --broker "$control" >&2; then
        say "warning: the boot did not finish cleanly; see 'lifeline boot report' and $run_dir/broker.log"
    fi

    start_console

    cat <<TXT

Lifeline is running: broker on $control, ${#names[@]} services (${names[*]}).
Logs and pids: $run_dir

Try next:
  open $console_url in a browser                 # the live console: services, bus, stack, boot
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
  lifeline describe gateway                            # a distributed actor: its funcs, typed shapes
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

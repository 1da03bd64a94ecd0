#!/usr/bin/env bash
# Sourced by launch.sh and test.sh: finds the Swift toolchain and installs what is missing
# (libzmq3-dev) on Debian when run as root.

lifeline_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

say() { printf '%s\n' "$*" >&2; }

ensure_swift() {
    if ! command -v swift >/dev/null 2>&1; then
        for dir in /opt/swift/usr/bin /usr/share/swift/usr/bin "$HOME/.local/share/swiftly/bin"; do
            if [ -x "$dir/swift" ]; then export PATH="$dir:$PATH"; break; fi
        done
    fi
    if ! command -v swift >/dev/null 2>&1; then
        say "error: no Swift toolchain found (need Swift 6.0 or newer)."
        say "Install one from https://www.swift.org/install/linux/ and put its usr/bin on PATH."
        exit 1
    fi
}

# Installs the Debian packages named after $1 (error: exit when they cannot be had; warning: say so
# and go on, with $2 saying what goes without them). Not root: prints the apt-get line to run.
install_missing() {
    local severity=$1 without=$2
    shift 2
    [ $# -eq 0 ] && return 0
    if [ "$(id -u)" != 0 ]; then
        say "$severity: missing Debian packages: $*${without:+ ($without)}"
        say "Install them with: sudo apt-get install -y $*"
        [ "$severity" = error ] && exit 1
        return 0
    fi
    say "installing $* ..."
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y "$@" >/dev/null 2>&1 || {
        apt-get update >/dev/null && apt-get install -y "$@" >/dev/null
    } || {
        say "$severity: apt-get could not install $*${without:+ ($without)}"
        [ "$severity" = error ] && exit 1
    }
    return 0
}

ensure_packages() {
    local missing=()
    dpkg -s libzmq3-dev >/dev/null 2>&1 || missing+=(libzmq3-dev)
    install_missing error "" "${missing[@]}"
}

# For the tests only: Debian's chromium and chromium-driver, which drive the console's page in a
# headless browser. Without them the browser tests are skipped, saying why.
ensure_browser() {
    local missing=()
    dpkg -s chromium >/dev/null 2>&1 || missing+=(chromium)
    dpkg -s chromium-driver >/dev/null 2>&1 || missing+=(chromium-driver)
    install_missing warning "the console's browser tests will be skipped" "${missing[@]}"
}

# For a broker group (and its tests): Debian's etcd-server, which holds the group's leadership.
# Without it the group's tests are skipped, saying why.
ensure_etcd() {
    local missing=()
    command -v etcd >/dev/null 2>&1 || missing+=(etcd-server)
    install_missing warning "broker groups and their tests need it" "${missing[@]}"
}

# Builds the package in configuration $1 (debug or release); exits when the build fails.
build_package() {
    say "building ($1) ..."
    cd "$lifeline_root"
    swift build -c "$1" || { local status=$?; say "error: the build failed (status $status)"; exit 1; }
}

ensure_prerequisites() {
    ensure_packages
    ensure_swift
}

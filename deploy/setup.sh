#!/usr/bin/env bash
# Sourced by launch.sh and test.sh: finds the Swift toolchain and installs what is missing
# (libzmq3-dev, pkg-config) on Debian when run as root.

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

ensure_packages() {
    local missing=()
    dpkg -s libzmq3-dev >/dev/null 2>&1 || missing+=(libzmq3-dev)
    command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ "$(id -u)" != 0 ]; then
        say "error: missing Debian packages: ${missing[*]}"
        say "Install them with: sudo apt-get install -y ${missing[*]}"
        exit 1
    fi
    say "installing ${missing[*]} ..."
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y "${missing[@]}" >/dev/null 2>&1 || {
        apt-get update >/dev/null && apt-get install -y "${missing[@]}" >/dev/null
    } || { say "error: apt-get could not install ${missing[*]}"; exit 1; }
}

# For the tests only: Debian's chromium and chromium-driver, which drive the console's page in a
# headless browser. Without them (and not root) the browser tests are skipped, saying why.
ensure_browser() {
    local missing=()
    dpkg -s chromium >/dev/null 2>&1 || missing+=(chromium)
    dpkg -s chromium-driver >/dev/null 2>&1 || missing+=(chromium-driver)
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ "$(id -u)" != 0 ]; then
        say "warning: ${missing[*]} missing: the console's browser tests will be skipped"
        say "Install them with: sudo apt-get install -y ${missing[*]}"
        return 0
    fi
    say "installing ${missing[*]} ..."
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y "${missing[@]}" >/dev/null 2>&1 || {
        apt-get update >/dev/null && apt-get install -y "${missing[@]}" >/dev/null
    } || say "warning: apt-get could not install ${missing[*]}: the console's browser tests will be skipped"
}

ensure_prerequisites() {
    ensure_packages
    ensure_swift
}

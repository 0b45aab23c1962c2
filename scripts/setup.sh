#!/usr/bin/env bash
# Idempotent set-up for a Debian 12 (or 13) machine: Debian packages, then the
# project's Python virtual environment.  Each step says whether it did work
# or found everything in place.  Called by ./hotline before every command.
#
# It must never fail silently: a fresh machine is exactly where a command
# nobody expected to fail does (dpkg-query on a package dpkg has never heard
# of).  Every command runs inside a named step; the ERR trap prints one line
# with the step, the command that failed, its status and the step's fix.
set -Eeuo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv="$repo/.venv"
log=$(mktemp "${TMPDIR:-/tmp}/hotline-setup.XXXXXX")
trap 'rm -f "$log"' EXIT

say() { printf 'setup: %s\n' "$*" >&2; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

step=starting fix="report it with the output above"
begin() { step=$1 fix=$2; }
on_error() {
    local status=$1 command=$2
    # The quiet commands write to $log: show its tail, which holds the cause.
    if [ -s "$log" ]; then tail -n 15 "$log" | sed 's/^/setup:   /' >&2; fi
    printf 'setup: error: %s failed: `%s` exited with status %s; %s\n' \
        "$step" "$command" "$status" "$fix" >&2
    exit 1
}
trap 'on_error $? "$BASH_COMMAND"' ERR
# Run a chatty command with its output kept in $log, shown only on failure.
quiet() { : >"$log"; "$@" >>"$log" 2>&1; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"
    elif command -v sudo >/dev/null; then sudo "$@"
    else die "installing Debian packages needs root; run as root or install sudo"; fi
}

# The installed version of a Debian package, empty when it is not installed
# (dpkg-query exits 1 for a package it has never heard of).
installed_version() {
    local status
    status=$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) || true
    case "$status" in
        *"install ok installed") dpkg-query -W -f='${Version}' "$1" ;;
    esac
}

begin "reading the system's release" "hotline supports Debian 12 (bookworm) or 13 (trixie)"
[ -r /etc/os-release ] || die "cannot read /etc/os-release; hotline supports Debian 12 or 13"
. /etc/os-release
case "${ID:-}:${VERSION_CODENAME:-}" in
    debian:bookworm) backports=bookworm-backports ;;
    debian:trixie) backports= ;;
    *) die "unsupported system '${PRETTY_NAME:-unknown}'; hotline supports Debian 12 (bookworm) or 13 (trixie)" ;;
esac

begin "listing Debian packages" "check that scripts/apt-packages.txt exists and is readable"
mapfile -t packages < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$repo/scripts/apt-packages.txt")

# A package counts as present only at the version hotline needs: on bookworm
# that means QEMU 10 from backports, not the distribution's 7.2.
missing=()
for p in "${packages[@]}"; do
    [ -n "$(installed_version "$p")" ] || missing+=("$p")
done
qemu_version=$(installed_version qemu-system-x86)
qemu_major=$(sed -E 's/^[0-9]+://; s/\..*//' <<<"$qemu_version")
if [ -n "$qemu_major" ] && [ "$qemu_major" -lt 10 ]; then
    missing+=(qemu-system-x86)
fi

if [ ${#missing[@]} -eq 0 ]; then
    say "Debian packages already installed (${#packages[@]} packages, QEMU $qemu_major)"
else
    say "installing Debian packages: ${missing[*]}"
    if [ -n "$backports" ]; then
        begin "enabling $backports" "add $backports to /etc/apt/sources.list.d by hand"
        list=/etc/apt/sources.list.d/hotline-backports.sources
        if ! grep -rqs "$backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
            say "enabling $backports for qemu-system-x86"
            printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
                "$backports" | as_root tee "$list" >/dev/null
        fi
    fi
    begin "updating Debian's package lists" "check the network and /etc/apt/sources.list, then run 'apt-get update' by hand"
    quiet as_root apt-get update -q
    export DEBIAN_FRONTEND=noninteractive DEBCONF_NOWARNINGS=yes
    # QEMU from backports where the release's own is too old; the rest from
    # the release.
    others=()
    for p in "${missing[@]}"; do [ "$p" = qemu-system-x86 ] || others+=("$p"); done
    if [ ${#others[@]} -gt 0 ]; then
        begin "installing Debian packages" "run 'apt-get install ${others[*]}' by hand to see why"
        quiet as_root apt-get install -y -q --no-install-recommends "${others[@]}"
    fi
    if [ ${#others[@]} -lt ${#missing[@]} ]; then
        begin "installing QEMU 10${backports:+ from $backports}" \
            "run 'apt-get install ${backports:+-t $backports }qemu-system-x86' by hand to see why"
        quiet as_root apt-get install -y -q --no-install-recommends ${backports:+-t "$backports"} \
            qemu-system-x86
    fi
    say "Debian packages installed"
fi

# The virtual environment is up to date when it was made from exactly these
# pinned requirements and this pyproject.toml.
want=$(cat "$repo/requirements.lock" "$repo/pyproject.toml" | sha256sum | cut -d' ' -f1)
stamp="$venv/.hotline-setup"
if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    say "Python environment up to date ($venv)"
else
    say "creating the Python environment in $venv (pinned in requirements.lock)"
    begin "creating the Python environment" "check that $repo is writable and python3-venv is installed"
    rm -rf "$venv"
    quiet /usr/bin/python3 -m venv "$venv"
    begin "installing Python packages" "check that PyPI is reachable, then delete $venv and rerun"
    # --use-pep517: the few packages published only as sdists are built as
    # wheels, not with the deprecated `setup.py install` (which warns).
    quiet "$venv/bin/pip" install -q --disable-pip-version-check --no-input --use-pep517 \
        -r "$repo/requirements.lock"
    # The package itself is used in place, from src/ (what an editable install does).
    "$venv/bin/python" -c 'import site, sys; open(site.getsitepackages()[0] + "/hotline.pth", "w").write(sys.argv[1] + "\n")' "$repo/src"
    echo "$want" > "$stamp"
    say "Python environment ready"
fi

#!/usr/bin/env bash
# Idempotent set-up for a Debian 12 (or 13) machine: Debian packages, then the
# project's Python virtual environment.  Each step says whether it did work
# or found everything in place.  Called by ./hotline before every command.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv="$repo/.venv"

say() { printf 'setup: %s\n' "$*" >&2; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"
    elif command -v sudo >/dev/null; then sudo "$@"
    else die "installing Debian packages needs root; run as root or install sudo"; fi
}

[ -r /etc/os-release ] || die "cannot read /etc/os-release; hotline supports Debian 12 or 13"
. /etc/os-release
case "${ID:-}:${VERSION_CODENAME:-}" in
    debian:bookworm) backports=bookworm-backports ;;
    debian:trixie) backports= ;;
    *) die "unsupported system '${PRETTY_NAME:-unknown}'; hotline supports Debian 12 (bookworm) or 13 (trixie)" ;;
esac

mapfile -t packages < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$repo/scripts/apt-packages.txt")

# A package counts as present only at the version hotline needs: on bookworm
# that means QEMU 10 from backports, not the distribution's 7.2.
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
qemu_major=$(dpkg-query -W -f='${Version}' qemu-system-x86 2>/dev/null | sed -E 's/^[0-9]+://; s/\..*//')
if [ -n "$qemu_major" ] && [ "$qemu_major" -lt 10 ]; then
    missing+=(qemu-system-x86)
fi

if [ ${#missing[@]} -eq 0 ]; then
    say "Debian packages already installed (${#packages[@]} packages, QEMU $qemu_major)"
else
    say "installing Debian packages: ${missing[*]}"
    if [ -n "$backports" ]; then
        list=/etc/apt/sources.list.d/hotline-backports.sources
        if ! grep -rqs "$backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
            say "enabling $backports for qemu-system-x86"
            printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
                "$backports" | as_root tee "$list" >/dev/null
        fi
    fi
    as_root apt-get update -q >/dev/null
    export DEBIAN_FRONTEND=noninteractive DEBCONF_NOWARNINGS=yes
    # QEMU from backports where the release's own is too old; the rest from
    # the release.
    others=()
    for p in "${missing[@]}"; do [ "$p" = qemu-system-x86 ] || others+=("$p"); done
    if [ ${#others[@]} -gt 0 ]; then
        as_root apt-get install -y -q --no-install-recommends "${others[@]}" >/dev/null
    fi
    if [ ${#others[@]} -lt ${#missing[@]} ]; then
        as_root apt-get install -y -q --no-install-recommends ${backports:+-t "$backports"} \
            qemu-system-x86 >/dev/null
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
    say "creating the Python environment in $venv"
    rm -rf "$venv"
    /usr/bin/python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check -r "$repo/requirements.lock"
    # The package itself is used in place, from src/ (what an editable install does).
    "$venv/bin/python" -c 'import site, sys; open(site.getsitepackages()[0] + "/hotline.pth", "w").write(sys.argv[1] + "\n")' "$repo/src"
    echo "$want" > "$stamp"
    say "Python environment ready"
fi

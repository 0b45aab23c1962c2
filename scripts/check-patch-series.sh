#!/usr/bin/env bash
# Check that every variant's series is a git-am-able patch series on the
# pristine kernel source: commit the source once into a scratch git
# repository, then `git am` each variant's series onto it in turn.
#
#   scripts/check-patch-series.sh [KERNEL_SOURCE_TREE]
#
# The tree defaults to the one hotline unpacked (~/.cache/hotline/kernel-source/*/tree).
# Takes about a minute (most of it committing the source).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tree=${1:-$(ls -d "${HOTLINE_CACHE:-$HOME/.cache/hotline}"/kernel-source/*/tree | head -1)}
[ -f "$tree/Makefile" ] || { echo "check-patch-series: no kernel tree at '$tree'" >&2; exit 1; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cp -a "$tree" "$scratch/linux"
cd "$scratch/linux"
git init -q
git -c user.name=hotline -c user.email=hotline@localhost commit -q --allow-empty -m empty
# -f: Debian's tree has a .gitignore that ignores its top level.
git add -A -f . >/dev/null
git -c user.name=hotline -c user.email=hotline@localhost commit -q -m pristine
pristine=$(git rev-parse HEAD)
failed=0
# The series are read by hotline's own reader (includes followed), not re-parsed here.
python=$repo/.venv/bin/python
[ -x "$python" ] || python=python3
for dir in "$repo"/kernel-patches/variants/*/; do
    variant=$(basename "$dir")
    git checkout -q -f "$pristine"
    list=$(PYTHONPATH="$repo/src" "$python" -m hotline.kernel.variants "$variant") || { failed=1; continue; }
    mapfile -t patches <<<"$list"
    if [ -z "$list" ]; then
        echo "$variant: no patches"
    elif git -c user.name=hotline -c user.email=hotline@localhost am -q "${patches[@]}" >"$scratch/am.log" 2>&1; then
        echo "$variant: git am applied ${#patches[@]} patches"
    else
        echo "$variant: git am FAILED:"; sed 's/^/    /' "$scratch/am.log"
        git am --abort >/dev/null 2>&1 || true
        failed=1
    fi
done
exit $failed

#!/bin/sh
# Writes the series for upstream Open vSwitch: the patches of ovs-patches/
# (without the packaging patch that marks the version), each patch that
# builds a file this repository adds to OVS's tree now adding that file, as
# 'git format-patch' files that 'git am' applies to stock Open vSwitch
# 3.1.0, numbered for a mailing list.  With --quilt, the series for a
# Debian source package instead: the packaging patch kept, the files named
# as in ovs-patches/ and listed in OUTDIR/series (packages/build-debs.sh).
#
# usage: build-aux/upstream-series.sh [--quilt] TARBALL OUTDIR
set -eu

quilt=false
if [ "${1:-}" = --quilt ]; then
    quilt=true
    shift
fi
tarball=${1:?usage: upstream-series.sh [--quilt] TARBALL OUTDIR}
out=${2:?usage: upstream-series.sh [--quilt] TARBALL OUTDIR}
top=$(cd "$(dirname "$0")/.." && pwd)
case $out in /*) ;; *) out=$PWD/$out ;; esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar xzf "$tarball" -C "$work" --strip-components=1
cd "$work"
export GIT_AUTHOR_NAME="AWAFS developers"
export GIT_AUTHOR_EMAIL=awafs-dev@example.org
export GIT_COMMITTER_NAME=$GIT_AUTHOR_NAME GIT_COMMITTER_EMAIL=$GIT_AUTHOR_EMAIL
git init -q
git add -A
git commit -qm "Open vSwitch 3.1.0"
base=$(git rev-parse HEAD)

for p in $(grep -v '^[[:space:]]*#' "$top/ovs-patches/series"); do
    case $p in
        build-Mark-AWAFS-builds-*)                  # Packaging, not upstream.
            $quilt || continue ;;
    esac
    git am -q "$top/ovs-patches/$p"
    case $p in
        lib-Build-the-AWAFS-core-*)
            cp "$top"/lib/awafs*.[ch] lib/ ;;
        netdev-dpdk-Add-the-awafs-QoS-type*)
            cp "$top"/netdev-ext/*.c "$top"/netdev-ext/*.def lib/ ;;
        ofproto-ovs-ofctl-Add-NXST_AWAFS-*)
            cp "$top"/ofproto-ext/awafs-ofp.[ch] \
               "$top"/ofproto-ext/awafs-props.def lib/ ;;
        tests-Run-the-AWAFS-core-s-unit-tests-*)
            cp "$top"/tests/unit/awafs-unit.h tests/
            for t in "$top"/tests/unit/test-*.c; do
                name=$(basename "$t")
                cp "$t" "tests/test-awafs-${name#test-}"
            done ;;
        *) continue ;;
    esac
    git add -A
    git commit -q --amend --no-edit
done

rm -rf "$out"
mkdir -p "$out"
git format-patch -q --zero-commit --no-signature -o "$out" "$base"
if $quilt; then
    for f in "$out"/[0-9][0-9][0-9][0-9]-*.patch; do
        mv "$f" "$out/$(basename "$f" | cut -c6-)"
    done
    grep -v '^[[:space:]]*#' "$top/ovs-patches/series" > "$out/series"
fi
ls "$out"

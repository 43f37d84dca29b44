#!/bin/sh
# Applies ovs-patches/ (in 'series' order) to the unpacked OVS tree.
#
# Re-running after a patch changed first restores, from the tarball, only the
# files the previous run patched (and removes the ones it created), so make
# recompiles only what the patches touch.
#
# usage: build-aux/ovs-patch.sh TARBALL OVS_DIR [PATCH_DIR]
set -eu

tarball=${1:?usage: ovs-patch.sh TARBALL OVS_DIR [PATCH_DIR]}
ovs=${2:?usage: ovs-patch.sh TARBALL OVS_DIR [PATCH_DIR]}
patches=${3:-$(cd "$(dirname "$0")/.." && pwd)/ovs-patches}
touched=$ovs/.awafs-touched-files

# Undo the previous run.
if [ -s "$touched" ]; then
    in_tar=""
    # A file several patches touch is listed once per patch.
    for f in $(sort -u "$touched"); do
        if tar tzf "$tarball" "openvswitch/$f" >/dev/null 2>&1; then
            in_tar="$in_tar openvswitch/$f"
        else
            rm -f "$ovs/$f"
        fi
    done
    if [ -n "$in_tar" ]; then
        # shellcheck disable=SC2086
        tar xzf "$tarball" -C "$ovs" --strip-components=1 $in_tar
    fi
fi
: > "$touched"

for p in $(grep -v '^[[:space:]]*#' "$patches/series"); do
    if ! patch -p1 -d "$ovs" -s -f --dry-run < "$patches/$p" >/dev/null 2>&1
    then
        echo "ovs-patch: $p does not apply to Open vSwitch 3.1.0:" >&2
        patch -p1 -d "$ovs" -f --dry-run < "$patches/$p" >&2 || true
        exit 1
    fi
    patch -p1 -d "$ovs" -s -f --no-backup-if-mismatch < "$patches/$p"
    sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$patches/$p" >> "$touched"
    echo "ovs-patch: applied $p"
done

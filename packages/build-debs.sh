#!/bin/sh
# Builds the Debian packages of a host running AWAFS (packages/README.md):
# the patched Open vSwitch from Debian's own openvswitch 3.1.0 packaging,
# with this project's series as quilt patches; awafs-host; awafs-controller
# (and its wheel).  Each is checked with lintian, which must report no
# error.  The packages and their .changes land in OUTDIR.
#
# usage: packages/build-debs.sh TARBALL OUTDIR
set -eu

tarball=${1:?usage: build-debs.sh TARBALL OUTDIR}
out=${2:?usage: build-debs.sh TARBALL OUTDIR}
top=$(cd "$(dirname "$0")/.." && pwd)
case $out in /*) ;; *) out=$PWD/$out ;; esac
. "$top/packages/version.sh"

# Installs what SRC's debian/control needs to build, if anything is missing.
build_deps() {
    if ! (cd "$1" && dpkg-checkbuilddeps >/dev/null 2>&1); then
        apt-get update -q
        DEBIAN_FRONTEND=noninteractive apt-get build-dep -y -q \
            --no-install-recommends "$1"
    fi
}

# A changelog entry on top of SRC's debian/changelog, if it has one:
# VERSION, TEXT.
changelog_entry() {
    { printf '%s (%s) bookworm; urgency=medium\n\n  * %s\n\n' \
          "$(sed -n 's/^Source: //p' "$1/debian/control")" "$2" "$3"
      printf ' -- %s  %s\n' "$AWAFS_MAINTAINER" "$AWAFS_DATE"
      if [ -f "$1/debian/changelog" ]; then
          echo
          cat "$1/debian/changelog"
      fi; } > "$1/debian/changelog.new"
    mv "$1/debian/changelog.new" "$1/debian/changelog"
}

# Builds the binary packages of source tree SRC, checks them with lintian
# and moves them to OUTDIR.
build() {
    build_deps "$1"
    # Debian's tools only: a Python of one's own (pyenv, say) earlier on
    # the PATH lacks Debian's setuptools.
    (cd "$1" && PATH=/usr/sbin:/usr/bin:/sbin:/bin \
        DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" \
        dpkg-buildpackage -b -uc -us)
    lintian --fail-on error "$(dirname "$1")"/*.changes
    mv "$(dirname "$1")"/*.deb "$(dirname "$1")"/*.changes \
       "$(dirname "$1")"/*.buildinfo "$out/"
}

mkdir -p "$out"
rm -f "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo "$out"/*.whl

# Open vSwitch.  The tarball is Debian's source with Debian's own patches
# already applied (openvswitch-source ships it so), so its debian/patches
# series is replaced by this project's series (the patch files stay:
# debian/automake.mk distributes them).
ovs=$out/openvswitch
rm -rf "$ovs"
mkdir -p "$ovs"
tar xzf "$tarball" -C "$ovs"
mv "$ovs/openvswitch" "$ovs/src"
"$top/build-aux/upstream-series.sh" --quilt "$tarball" "$ovs/series" \
    >/dev/null
mv "$ovs"/series/* "$ovs/src/debian/patches/"
rmdir "$ovs/series"
# The files of Debian's packaging that the tarball lacks ('make dist' ships
# only those debian/automake.mk lists): packages/openvswitch/.
cp -p "$top"/packages/openvswitch/* "$ovs/src/debian/"
changelog_entry "$ovs/src" "$OVS_DEB_VERSION" \
    "Add the awafs QoS type (AWAFS for Open vSwitch $AWAFS_COMMIT)."
build "$ovs/src"

# awafs (awafs-host, awafs-controller): a native source package of this
# tree as it is (its tracked files), with packages/debian as debian/.
awafs=$out/awafs
rm -rf "$awafs"
mkdir -p "$awafs/src"
git -C "$top" ls-files -z | (cd "$top" && tar --null -T - -cf -) | \
    tar -xf - -C "$awafs/src"
cp -r "$top/packages/debian" "$awafs/src/debian"
changelog_entry "$awafs/src" "$AWAFS_VERSION" "AWAFS $AWAFS_COMMIT."
build "$awafs/src"

# The controller's wheel.
"$top/packages/build-wheel.sh" "$out"
ls "$out"/*.deb "$out"/*.whl

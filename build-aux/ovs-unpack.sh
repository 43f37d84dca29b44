#!/bin/sh
# Unpacks the Open vSwitch tarball into DIR and checks that it is 3.1.0.
#
# usage: build-aux/ovs-unpack.sh TARBALL DIR
set -eu

tarball=${1:?usage: ovs-unpack.sh TARBALL DIR}
dir=${2:?usage: ovs-unpack.sh TARBALL DIR}
want=3.1.0

if [ ! -r "$tarball" ]; then
    echo "ovs-unpack: $tarball not found (run 'make setup': it installs" \
         "Debian's openvswitch-source)" >&2
    exit 1
fi
rm -rf "$dir"
mkdir -p "$dir"
tar xzf "$tarball" -C "$dir" --strip-components=1
version=$(sed -n 's/^AC_INIT(openvswitch, *\([^,]*\),.*/\1/p' \
          "$dir/configure.ac")
if [ "$version" != "$want" ]; then
    echo "ovs-unpack: $tarball is Open vSwitch '$version', AWAFS needs" \
         "exactly $want" >&2
    rm -rf "$dir"
    exit 1
fi
echo "ovs-unpack: Open vSwitch $version in $dir"

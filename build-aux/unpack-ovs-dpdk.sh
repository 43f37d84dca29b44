#!/bin/sh
# Unpacks ovs-vswitchd-dpdk from an openvswitch-switch-dpdk package into
# DIR, as a reference for benchmarks: Debian's own (the same OVS 3.1.0 and
# DPDK 22.11 without AWAFS), downloaded, or the package DEB, which
# `make deb` builds from the series with Debian's packaging.  The package
# is extracted, not installed, so no system service is configured or
# started.
#
# usage: build-aux/unpack-ovs-dpdk.sh DIR [DEB]   (prints the binary's path)
set -eu

dir=${1:?usage: unpack-ovs-dpdk.sh DIR [DEB]}
deb=${2:-}
bin=$dir/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk

if [ -n "$deb" ]; then
    # A package of our own is rebuilt: unpack it again each time.
    rm -rf "$dir"
    mkdir -p "$dir"
    dpkg-deb -x "$deb" "$dir"
elif [ ! -x "$bin" ]; then
    mkdir -p "$dir"
    (cd "$dir" && apt-get download -q -o APT::Sandbox::User=root \
        openvswitch-switch-dpdk >/dev/null)
    dpkg-deb -x "$dir"/openvswitch-switch-dpdk_*.deb "$dir"
fi
if ldd "$bin" | grep -q "not found"; then
    echo "unpack-ovs-dpdk: missing libraries for $bin:" >&2
    ldd "$bin" | grep "not found" >&2
    exit 1
fi
echo "$bin"

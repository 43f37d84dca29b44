#!/bin/sh
# Unpacks Debian's stock ovs-vswitchd-dpdk (package openvswitch-switch-dpdk,
# the same OVS 3.1.0 and DPDK 22.11 without AWAFS) into DIR, as the outside
# reference for benchmarks.  The package is downloaded and extracted, not
# installed, so no system service is configured or started.
#
# usage: build-aux/fetch-stock-ovs.sh DIR    (prints the binary's path)
set -eu

dir=${1:?usage: fetch-stock-ovs.sh DIR}
bin=$dir/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk

if [ ! -x "$bin" ]; then
    mkdir -p "$dir"
    (cd "$dir" && apt-get download -q -o APT::Sandbox::User=root \
        openvswitch-switch-dpdk >/dev/null)
    dpkg-deb -x "$dir"/openvswitch-switch-dpdk_*.deb "$dir"
fi
if ldd "$bin" | grep -q "not found"; then
    echo "fetch-stock-ovs: missing libraries for $bin:" >&2
    ldd "$bin" | grep "not found" >&2
    exit 1
fi
echo "$bin"

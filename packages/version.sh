# The versions of the packages packages/build-debs.sh builds, sourced by
# it; packages/tests/test_debs.py reads the Open vSwitch ones.

# Debian's version with +awafsN: apt prefers it to Debian's, and Debian's
# next security update (3.1.0-2+deb12u2) to it.
OVS_BASE_VERSION=3.1.0-2+deb12u1
OVS_DEB_VERSION=$OVS_BASE_VERSION+awafs1
AWAFS_VERSION=0.1.0

AWAFS_MAINTAINER="AWAFS developers <awafs-dev@example.org>"
AWAFS_COMMIT=$(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)
AWAFS_DATE=$(git -C "$top" log -1 --format=%aD 2>/dev/null || date -R)

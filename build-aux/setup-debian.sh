#!/bin/sh
# Installs everything AWAFS needs on Debian 12, by package name, and the
# pinned Python packages into a virtual environment.  Idempotent: apt runs
# only when a package is missing, pip only when requirements.txt changed.
#
# usage: build-aux/setup-debian.sh VENV_DIR
set -eu

venv=${1:?usage: setup-debian.sh VENV_DIR}
top=$(cd "$(dirname "$0")/.." && pwd)

# OVS 3.1.0 sources and its build dependencies; DPDK 22.11 (headers, PMDs,
# dpdk-testpmd); compilers and test tools for the core (gcc-multilib: the
# core's 32-bit build check); the Redis and
# memcached client libraries the message-boundary tests use; matplotlib for
# the demo's plot; SciPy for Karuna's thresholds (sim/karuna_thresholds.py); Mininet (its Python API builds the testbeds); Chromium,
# its WebDriver and selenium for the controller dashboard's browser test;
# Debian's packaging tools, lintian and mmdebstrap for make deb and make
# check-deb (the packages' own build dependencies: 'apt-get build-dep' by
# packages/build-debs.sh); ns-3 3.37 for the simulated evaluation
# (sim/ns3/, make eval-sim).
packages="
openvswitch-source libdpdk-dev dpdk dpdk-dev
autoconf automake libtool pkg-config make gcc libssl-dev libcap-ng-dev
libnuma-dev libpcap-dev libunbound-dev libxdp1 libbpf1
python3 python3-venv python3-pip python3-setuptools python3-wheel
python3-redis python3-pymemcache
python3-matplotlib python3-scipy mininet
chromium chromium-driver python3-selenium
clang llvm libclang-rt-14-dev libcmocka-dev libbpf-dev bpftool
gcc-multilib g++
libns3-dev
dpkg-dev debhelper dh-python lintian mmdebstrap
"

# Every program the project executes -- the build, the tests, the testbed,
# the demo, the benchmarks -- as program:package.  Their packages are
# installed too, and setup ends by checking each program with 'command -v'.
# tests/test_programs.py scans the sources and fails on a program missing
# here.  Lines marked "by hand" are programs the scan cannot see (run
# through system() in C, or inside a quoted command substitution).
programs="
apt-get:apt
ar:binutils
basename:coreutils
bpftool:bpftool
cat:coreutils
chromedriver:chromium-driver  # by hand: selenium starts it (tests/test_controller.py)
chromium:chromium       # by hand: chromedriver starts it
chroot:coreutils        # by hand: the check-deb root's holder (packages/tests)
clang:clang
cmp:diffutils
cp:coreutils
curl:curl
date:coreutils
dirname:coreutils       # by hand: inside quoted command substitutions
dpdk-testpmd:dpdk-dev    # the guest of vhost-user tests (testbed/vhost.py)
dpkg-buildpackage:dpkg-dev
dpkg-checkbuilddeps:dpkg-dev
dpkg-deb:dpkg
dpkg-query:dpkg
dpkg-scanpackages:dpkg-dev
ethtool:ethtool
find:findutils
gcc:gcc                 # -m32 needs gcc-multilib (packages above)
git:git                 # build-aux/upstream-series.sh
grep:grep
ip:iproute2             # also by hand: awafs-host per-segment runs it
iperf3:iperf3
ldd:libc-bin
lintian:lintian
ln:coreutils
ls:coreutils
make:make
memcached:memcached
mkdir:coreutils
mktemp:coreutils
mmdebstrap:mmdebstrap
mnexec:mininet          # by hand: testbed/net.py builds its command lines
mount:mount
mv:coreutils
nginx:nginx-light
nproc:coreutils
nsenter:util-linux
patch:patch
perf:linux-perf
ping:iputils-ping
pwd:coreutils
python3:python3
readlink:coreutils      # by hand: ryu-app/awafs-controller
redis-cli:redis-tools
redis-server:redis-server
rm:coreutils
rmdir:coreutils
sed:sed
setpriv:util-linux
sh:dash
sort:coreutils
ss:iproute2
stdbuf:coreutils        # the verbose guest logs line by line (testbed/vhost.py)
strace:strace
sysctl:procps
systemd-analyze:systemd
tail:coreutils
tar:tar
taskset:util-linux
tcpdump:tcpdump
touch:coreutils
umount:mount
unshare:util-linux
valgrind:valgrind       # by hand: the wrapper of bench/instructions.py
callgrind_control:valgrind
"

program_packages=$(echo "$programs" | sed -n 's/^[^#:]*:\([^[:space:]#]*\).*/\1/p')
missing=""
for p in $packages $program_packages; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    case "$status" in
        *"ok installed") ;;
        *) missing="$missing $p" ;;
    esac
done

if [ -n "$missing" ]; then
    if [ "$(id -u)" != 0 ]; then
        echo "setup: missing Debian packages:$missing" >&2
        echo "setup: run 'make setup' as root to install them" >&2
        exit 1
    fi
    echo "setup: installing$missing"
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
        --no-install-recommends $missing
fi

# The venv sees Debian's Python packages too (python3-selenium for the
# controller's browser test, Mininet's), so it is built from Debian's
# interpreter; os-ken comes pinned from requirements.txt (Debian's is old).
stamp="$venv/.requirements"
if [ ! -x "$venv/bin/python" ]; then
    /usr/bin/python3 -m venv --system-site-packages "$venv"
fi
if ! cmp -s "$top/requirements.txt" "$stamp"; then
    "$venv/bin/pip" install -q --disable-pip-version-check \
        -r "$top/requirements.txt"
    cp "$top/requirements.txt" "$stamp"
fi

# The project's own packages (pyproject.toml), editable: testbed, eval,
# bench, sim, demo and awafs_controller import by name from anywhere, and
# an edit needs no reinstall.  Built with Debian's setuptools and wheel
# (no network); again when pyproject.toml changes.
stamp="$venv/.pyproject"
if ! cmp -s "$top/pyproject.toml" "$stamp"; then
    "$venv/bin/pip" install -q --disable-pip-version-check --no-deps \
        --no-build-isolation -e "$top"
    cp "$top/pyproject.toml" "$stamp"
fi

# The guard: every program the project runs is here now.
absent=""
for entry in $(echo "$programs" | sed -n 's/^\([^#:[:space:]]*:[^[:space:]#]*\).*/\1/p')
do
    program=${entry%%:*}
    if ! command -v "$program" >/dev/null 2>&1; then
        absent="$absent $program (Debian package ${entry#*:})"
    fi
done
if [ -n "$absent" ]; then
    echo "setup: programs the project runs are missing:$absent" >&2
    exit 1
fi

# AWAFS for Open vSwitch: build, test and demo entry points.
#
#   make setup   install Debian packages and the Python venv (root, idempotent)
#   make         build patched OVS 3.1.0 + DPDK 22.11 and the AWAFS tools
#   make check   setup + build + every test (pytest drives all of them)
#   make eval    the seeds' experiments on real TCP (about 2 h 25 min; resumable)
#   make eval-report  the report of make eval, again, from its CSVs, and
#                     the kept runs' sections checked against their runs
#   make eval-smoke  the reduced micro benchmark of make check, alone
#   make eval-sim  the micro benchmark on ns-3, the core on a simulated port
#   make eval-sim-grid  AWAFS, PIAS, FIFO on ns-3's leaf-spine (resumable)
#   make eval-sim-tfs  TFS's fat-tree and queries on ns-3 (resumable)
#   make eval-sim-karuna  Karuna's mixed flows on ns-3's leaf-spine (resumable)
#   make demo    setup + build + the main job
#   make bench   setup + build + benchmarks (report in build/bench/)
#   make fuzz    every fuzz target for 10 M inputs, from tests/fuzz/corpus/
#   make soak    30 minutes of traffic, reconfiguration and port churn
#   make check-ovs  OVS's whole testsuite against stock's known failures
#   make upstream-series  the series for a mailing list, new files included
#   make deb     Debian packages of the switch, agent and controller (build/deb)
#   make check-deb  make deb, then the packages on a throwaway Debian 12 root
#   make clean   remove build/
#
# Everything generated lives in build/.  See docs/build.md.

OVS_TARBALL ?= /usr/src/openvswitch/openvswitch.tar.gz
JOBS ?= $(shell nproc)
FUZZ_RUNS ?= 10000000

B := build
OVS := $(B)/ovs
CORE := $(B)/core
BIN := $(B)/bin
VENV := $(B)/venv
PYTEST := $(VENV)/bin/python -m pytest
SHARED ?= ../shared

CORE_SRCS := $(wildcard lib/awafs*.c)
CORE_HDRS := lib/awafs.h lib/awafs-private.h lib/awafs-compat.h
CORE_OBJS := $(patsubst lib/%.c,$(CORE)/%.o,$(CORE_SRCS))

# The OpenFlow message's encoding (ofproto-ext/), compiled by OVS in its lib/
# as the core is, and alone for its unit test.
OFPEXT_FILES := ofproto-ext/awafs-ofp.c ofproto-ext/awafs-ofp.h \
	ofproto-ext/awafs-props.def

# The awafs QoS type of netdev-dpdk (netdev-ext/), compiled by OVS in its
# lib/; the series adds it to lib/automake.mk.
NETDEVEXT_FILES := $(wildcard netdev-ext/*.c netdev-ext/*.def)

# OVS's own warning set, so that the core compiles cleanly inside OVS too.
CORE_CFLAGS := -std=gnu11 -O2 -g -pthread -Werror -Wall -Wextra \
	-Wno-sign-compare -Wpointer-arith -Wformat -Wformat-security \
	-Wswitch-enum -Wunused-parameter -Wbad-function-cast -Wcast-align \
	-Wstrict-prototypes -Wold-style-definition -Wmissing-prototypes \
	-Wmissing-field-initializers -Wshadow -Wduplicated-cond \
	-fno-strict-aliasing -Ilib

UNIT_SRCS := $(wildcard tests/unit/test-*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(CORE)/tests/%,$(UNIT_SRCS))

FUZZ_TARGETS := hdr flowtab
FUZZ_BINS := $(patsubst %,$(B)/fuzz/fuzz-%,$(FUZZ_TARGETS))
FUZZ_FLAGS := -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=all -Ilib

# The core's concurrent parts under ThreadSanitizer (tests/tsan/).
TSAN_BIN := $(B)/tsan/stress-core

AGENT := $(B)/host-agent
# The AWAFS option's constants, from their one definition in lib/awafs.h.
AWAFS_OPT_DEFS := $(shell sed -n \
	's/^\#define \(AWAFS_OPT_[A-Z_]*\|AWAFS_BYTES_SENT_MAX\) *\([0-9a-fx]*\).*/-D\1=\2/p' \
	lib/awafs.h)
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_x86 -Wall -Werror \
	-I$(AGENT) $(AWAFS_OPT_DEFS)

OVS_PROGRAMS := vswitchd/ovs-vswitchd ovsdb/ovsdb-server ovsdb/ovsdb-tool \
	utilities/ovs-vsctl utilities/ovs-appctl utilities/ovs-ofctl

.PHONY: all build setup core unit ovs host-agent check eval eval-report \
	eval-smoke eval-sim eval-sim-grid eval-sim-tfs eval-sim-karuna demo \
	bench fuzz soak \
	check-ovs clean controller upstream-series deb check-deb ns3

all build: ovs core host-agent controller ns3

# ---- setup ----------------------------------------------------------------

setup:
	@build-aux/setup-debian.sh $(VENV)

# ---- the AWAFS core, on its own ------------------------------------------

core: $(CORE)/libawafs.a unit $(BIN)/awafs-sim $(FUZZ_BINS) $(TSAN_BIN) \
	$(B)/bench/core-bench

$(CORE)/%.o: lib/%.c $(CORE_HDRS)
	@mkdir -p $(@D)
	$(CC) $(CORE_CFLAGS) -c $< -o $@

$(CORE)/libawafs.a: $(CORE_OBJS)
	rm -f $@
	ar rcs $@ $^

unit: $(UNIT_BINS)

$(CORE)/tests/%: tests/unit/%.c tests/unit/awafs-unit.h $(CORE)/libawafs.a
	@mkdir -p $(@D)
	$(CC) $(CORE_CFLAGS) -Itests/unit $< $(CORE)/libawafs.a -lcmocka -lm -o $@

$(CORE)/tests/test-ofp: tests/unit/test-ofp.c tests/unit/awafs-unit.h \
		$(OFPEXT_FILES)
	@mkdir -p $(@D)
	$(CC) $(CORE_CFLAGS) -Itests/unit -Iofproto-ext $< \
		ofproto-ext/awafs-ofp.c -lcmocka -o $@

$(BIN)/awafs-sim: sim/awafs-sim.c $(CORE)/libawafs.a
	@mkdir -p $(@D)
	$(CC) $(CORE_CFLAGS) $< $(CORE)/libawafs.a -lm -o $@

$(B)/bench/core-bench: bench/core-bench.c $(CORE)/libawafs.a
	@mkdir -p $(@D)
	$(CC) $(CORE_CFLAGS) $< $(CORE)/libawafs.a -lm -o $@

$(B)/fuzz/fuzz-%: tests/fuzz/fuzz-%.c $(CORE_SRCS) $(CORE_HDRS)
	@mkdir -p $(@D)
	clang $(FUZZ_FLAGS) $< lib/awafs-hdr.c lib/awafs-flowtab.c \
		lib/awafs-srclimit.c lib/awafs-sched.c -o $@

$(TSAN_BIN): tests/tsan/stress-core.c $(CORE_SRCS) $(CORE_HDRS)
	@mkdir -p $(@D)
	clang -g -O1 -fsanitize=thread -Ilib tests/tsan/stress-core.c \
		$(CORE_SRCS) -lpthread -lm -o $@

# ---- the core on ns-3 (sim/ns3/) ------------------------------------------
#
# Debian's libns3-dev 3.37: headers in /usr/include/ns3, one library per
# module (libns3-MODULE.so).  Its pkg-config files are not used: they name
# libgsl.so, which only libgsl-dev installs, and a stray "-I/usr;".

NS3_LIBS := -lns3-core -lns3-network -lns3-internet -lns3-point-to-point \
	-lns3-traffic-control
NS3_CXXFLAGS := -std=c++17 -O2 -g -Werror -Wall -Wextra -Ilib -Inetdev-ext
NS3_SRCS := $(sort $(wildcard sim/ns3/*.cc))
NS3_OBJS := $(patsubst sim/ns3/%.cc,$(B)/ns3/%.o,$(NS3_SRCS))

ns3: $(BIN)/awafs-ns3

$(BIN)/awafs-ns3: $(NS3_OBJS) $(CORE)/libawafs.a
	@mkdir -p $(@D)
	$(CXX) $(NS3_CXXFLAGS) $(NS3_OBJS) $(CORE)/libawafs.a $(NS3_LIBS) -lm \
		-o $@

$(B)/ns3/%.o: sim/ns3/%.cc $(CORE_HDRS)
	@mkdir -p $(@D)
	$(CXX) $(NS3_CXXFLAGS) -c $< -o $@

# Each source's own headers (sim/ns3/).
$(B)/ns3/awafs-ns3.o: $(addprefix sim/ns3/,awafs-queue-disc.h \
	clos-routing.h five-tuple.h options.h srpt-queue-disc.h tcp-mcp.h)
$(B)/ns3/awafs-queue-disc.o: sim/ns3/awafs-queue-disc.h
$(B)/ns3/tcp-mcp.o: sim/ns3/tcp-mcp.h
$(B)/ns3/srpt-queue-disc.o: sim/ns3/srpt-queue-disc.h sim/ns3/five-tuple.h
$(B)/ns3/clos-routing.o: sim/ns3/clos-routing.h sim/ns3/five-tuple.h
$(B)/ns3/options.o: sim/ns3/options.h sim/ns3/awafs-queue-disc.h \
	netdev-ext/netdev-dpdk-awafs-keys.def

# ---- the host agent (BPF, libbpf) ----------------------------------------

host-agent: $(BIN)/awafs-host $(AGENT)/fill_options.bpf.o \
	$(AGENT)/lying_sender.bpf.o

.SECONDARY: $(AGENT)/awafs_sockops.bpf.o $(AGENT)/awafs_dctcp.bpf.o

# Types of the running kernel, from its BTF.
$(AGENT)/vmlinux.h:
	@mkdir -p $(@D)
	bpftool btf dump file /sys/kernel/btf/vmlinux format c > $@

$(AGENT)/%.bpf.o: host-agent/%.bpf.c $(AGENT)/vmlinux.h lib/awafs.h
	clang $(BPF_CFLAGS) -c $< -o $@

# Test helpers (tests/test_host_agent.py): a program that fills the TCP
# option space, and a lying end host.
$(AGENT)/%.bpf.o: tests/bpf/%.bpf.c $(AGENT)/vmlinux.h lib/awafs.h
	clang $(BPF_CFLAGS) -c $< -o $@

$(AGENT)/%.skel.h: $(AGENT)/%.bpf.o
	bpftool gen skeleton $< name $* > $@

$(BIN)/awafs-host: host-agent/awafs-host.c $(AGENT)/awafs_sockops.skel.h \
		$(AGENT)/awafs_dctcp.skel.h
	@mkdir -p $(@D)
	$(CC) -O2 -g -Wall -Wextra -Werror $(CPPFLAGS) $(CFLAGS) -I$(AGENT) $< \
		$(LDFLAGS) -lbpf -o $@

# ---- patched Open vSwitch -------------------------------------------------
#
# unpack (once) -> patch (again whenever ovs-patches/ changes) -> boot.sh +
# configure (once) -> make (incremental).  A changed patch re-applies onto
# freshly restored copies of only the files it touches; make then rebuilds
# only those (automake regenerates its Makefiles itself if needed).

$(OVS)/.unpacked:
	build-aux/ovs-unpack.sh $(OVS_TARBALL) $(OVS)
	@touch $@

$(OVS)/.patched: $(OVS)/.unpacked ovs-patches/series \
		$(wildcard ovs-patches/*.patch)
	build-aux/ovs-patch.sh $(OVS_TARBALL) $(OVS)
	@touch $@

$(OVS)/.configured: | $(OVS)/.patched
	cd $(OVS) && ./boot.sh >/dev/null 2>&1 && \
		./configure --with-dpdk=shared --enable-Werror >/dev/null
	@touch $@

# The core, ofproto-ext/ and netdev-ext/ are compiled by OVS through symlinks
# in its lib/, the core's unit tests (as ovstest commands) through symlinks in
# its tests/, so editing them is an ordinary incremental rebuild.
ovs: $(OVS)/.patched $(OVS)/.configured
	@for f in $(CORE_SRCS) $(CORE_HDRS); do \
		ln -sf $(CURDIR)/$$f $(OVS)/$$f; \
	done
	@for f in $(OFPEXT_FILES) $(NETDEVEXT_FILES); do \
		ln -sf $(CURDIR)/$$f $(OVS)/lib/$$(basename $$f); \
	done
	@ln -sf $(CURDIR)/tests/unit/awafs-unit.h $(OVS)/tests/awafs-unit.h
	@for f in $(UNIT_SRCS); do \
		ln -sf $(CURDIR)/$$f \
			$(OVS)/tests/test-awafs-$${f#tests/unit/test-}; \
	done
	@echo "make -C $(OVS) -j$(JOBS) (log: $(B)/ovs-build.log)"
	@$(MAKE) -C $(OVS) -j$(JOBS) > $(B)/ovs-build.log 2>&1 || \
		{ tail -40 $(B)/ovs-build.log; echo "OVS build failed:" \
		  "see $(B)/ovs-build.log"; exit 1; }
	@mkdir -p $(BIN)
	@for p in $(OVS_PROGRAMS); do \
		ln -sf $(CURDIR)/$(OVS)/$$p $(BIN)/$$(basename $$p); \
	done

# The same Open vSwitch without the series, configured and built as $(OVS)
# is: make bench counts what the series adds to a port without QoS
# (bench/instructions.py, which needs the symbols Debian's binary lacks).
OVS_UNPATCHED := $(B)/ovs-unpatched

$(OVS_UNPATCHED)/vswitchd/ovs-vswitchd:
	build-aux/ovs-unpack.sh $(OVS_TARBALL) $(OVS_UNPATCHED)
	cd $(OVS_UNPATCHED) && ./boot.sh >/dev/null 2>&1 && \
		./configure --with-dpdk=shared --enable-Werror >/dev/null
	@$(MAKE) -C $(OVS_UNPATCHED) -j$(JOBS) \
		> $(B)/ovs-unpatched-build.log 2>&1 || \
		{ tail -40 $(B)/ovs-unpatched-build.log; echo "OVS build" \
		  "failed: see $(B)/ovs-unpatched-build.log"; exit 1; }

# ---- the controller app (ryu-app/), on the venv of make setup ----------

controller: $(BIN)/awafs-controller

$(BIN)/awafs-controller: ryu-app/awafs-controller
	@mkdir -p $(@D)
	ln -sf $(CURDIR)/$< $@

# ---- tests and the main job ----------------------------------------------

check: setup build
	$(PYTEST) tests

# The experiments: runs not finished yet, then build/eval/report.md.
eval: setup build
	$(VENV)/bin/python -m eval.run --out $(B)/eval

eval-report: setup
	$(VENV)/bin/python -m eval.kept check
	$(VENV)/bin/python -m eval.doc_numbers
	if [ -d $(B)/eval/runs ]; then \
		$(VENV)/bin/python -m eval.report --out $(B)/eval; fi

# A reduced micro benchmark on real TCP through the switch (part of check).
eval-smoke: setup build
	$(PYTEST) tests/test_eval_smoke.py

# The micro benchmark on ns-3 (sim/ns3/): the core on a simulated port,
# five schemes in the testbed's regime, seeds 1-5, and the cross-check
# against the testbed's kept run (about 35 s); build/eval-sim/report.md.
eval-sim: setup $(BIN)/awafs-ns3
	$(VENV)/bin/python -m sim.ns3_eval --out $(B)/eval-sim

# The thesis's large-scale comparison on ns-3's leaf-spine (sim/ns3_grid.py):
# awafs, pias, fifo first, then srpt and auto, four workloads, 50 and 80 %,
# five seeds of GRID_FLOWS flows, a run per core at a time; resumable (a
# kept run is not run again); build/eval-sim-grid/summary.md.  Long:
# sim/ns3/README.md gives the cost.
GRID_FLOWS ?= 10000
eval-sim-grid: setup $(BIN)/awafs-ns3
	$(VENV)/bin/python -m sim.ns3_grid --out $(B)/eval-sim-grid \
		--flows $(GRID_FLOWS) --jobs $$(nproc)

# TFS's packet-level simulation (seed 004, sim/ns3_tfs.py): a k = 6
# fat-tree, queries beside background flows, FIFO, acks-first, TFS, TFS+,
# five seeds, a run per core at a time; resumable;
# build/eval-sim-tfs/summary.md.
eval-sim-tfs: setup $(BIN)/awafs-ns3
	$(VENV)/bin/python -m sim.ns3_tfs --out $(B)/eval-sim-tfs --jobs $$(nproc)

# Karuna's large-scale simulation (seed 003, sim/ns3_karuna.py): data
# mining at 80 % on the 3 x 4 leaf-spine, a third of the flows with
# deadlines, a third with a known size; DCTCP alone, deadline flows on top,
# Karuna static and learned; five seeds, a run per core at a time;
# resumable; build/eval-sim-karuna/summary.md.
eval-sim-karuna: setup $(BIN)/awafs-ns3
	$(VENV)/bin/python -m sim.ns3_karuna --out $(B)/eval-sim-karuna \
		--jobs $$(nproc)

demo: setup build
	$(VENV)/bin/python -m demo.awafs_demo

# Benchmarks (about 30 minutes): CSV files and report.md in build/bench/.
# Besides the build, Debian's stock ovs-vswitchd-dpdk and the series built
# by Debian's packaging (make deb), to compare the two as built alike, and
# OVS built without the series as the build is, for the instruction count.
bench: setup build deb $(OVS_UNPATCHED)/vswitchd/ovs-vswitchd
	$(VENV)/bin/python -m bench.run $(B)/bench $(B)/bench/core-bench \
		"$$(build-aux/unpack-ovs-dpdk.sh $(B)/stock)" \
		"$$(build-aux/unpack-ovs-dpdk.sh $(B)/deb-vswitchd \
			$(B)/deb/openvswitch-switch-dpdk_*+awafs*.deb)" \
		$(OVS_UNPATCHED)/vswitchd/ovs-vswitchd

# Each target runs FUZZ_RUNS inputs from its corpus in tests/fuzz/corpus/
# (read only; new finds go to build/fuzz/new-TARGET) and, for the parser,
# the seeds of make_seeds.py.  docs/testing.md says how to fold finds back.
fuzz: setup $(FUZZ_BINS)
	$(VENV)/bin/python -m tests.fuzz.make_seeds $(B)/fuzz/seeds-hdr
	@set -e; for t in $(FUZZ_TARGETS); do \
		mkdir -p $(B)/fuzz/new-$$t; \
		echo "fuzz-$$t: $(FUZZ_RUNS) inputs"; \
		$(B)/fuzz/fuzz-$$t -runs=$(FUZZ_RUNS) -seed=1 \
			-dict=tests/fuzz/awafs.dict $(B)/fuzz/new-$$t \
			tests/fuzz/corpus/$$t \
			$$([ $$t = hdr ] && echo $(B)/fuzz/seeds-hdr) \
			> $(B)/fuzz/$$t.log 2>&1 \
			|| { tail -40 $(B)/fuzz/$$t.log; exit 1; }; \
		tail -1 $(B)/fuzz/$$t.log; \
	done

soak: setup build
	$(VENV)/bin/python -m tests.soak --minutes 30 --out $(B)/soak

# The series as a mailing list would get it: build/upstream-series/, which
# git am applies to stock OVS 3.1.0 (tests/test_upstream_series.py).
upstream-series: setup
	build-aux/upstream-series.sh $(OVS_TARBALL) $(B)/upstream-series

# Debian packages for a host (packages/README.md): Debian's own openvswitch
# packaging with the series as quilt patches, awafs-host, awafs-controller
# and the controller's wheel, in build/deb/.
deb: setup
	packages/build-debs.sh $(OVS_TARBALL) $(B)/deb

# The packages installed, run, upgraded to and from Debian's, and purged, in
# a root made by mmdebstrap (docs/testing.md).
check-deb: deb
	$(PYTEST) packages/tests

# OVS's whole testsuite on the patched tree (about an hour), compared with
# the stock tarball's failures on this machine (tests/ovs-known-failures.txt).
check-ovs: setup build
	$(VENV)/bin/python -m tests.ovs_check_all $(OVS) $(JOBS)

clean:
	rm -rf $(B)

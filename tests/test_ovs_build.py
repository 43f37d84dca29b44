"""The patched Open vSwitch build: version marker, and the behaviour of the
unpack/patch scripts the Makefile relies on."""

import re
import subprocess
import tarfile

import pytest

from tests.conftest import BIN, BUILD, REPO

SCRIPTS = REPO / "build-aux"
OVS_PROGRAMS = ["ovs-vswitchd", "ovsdb-server", "ovsdb-tool", "ovs-vsctl",
                "ovs-appctl", "ovs-ofctl"]


@pytest.mark.parametrize("program", OVS_PROGRAMS)
def test_patched_programs_report_awafs(program):
    out = subprocess.run([str(BIN / program), "--version"], check=True,
                         capture_output=True, text=True).stdout
    assert "(Open vSwitch) 3.1.0+awafs" in out


def test_vswitchd_links_dpdk():
    out = subprocess.run([str(BIN / "ovs-vswitchd"), "--version"],
                         check=True, capture_output=True, text=True).stdout
    assert "DPDK 22.11" in out


def test_core_compiled_inside_ovs():
    """The core is built into libopenvswitch, under OVS's -Werror flags."""
    for name in ("awafs-hdr", "awafs-ring", "awafs-adapt", "awafs-sched",
                 "awafs-histwin"):
        assert (BUILD / "ovs" / "lib" / f"{name}.lo").exists(), name


# The C files the patches change, and the core and the OVS-side sources
# (netdev-ext/, ofproto-ext/) they build into libopenvswitch.
PATCHED_C = sorted(
    {m for p in (REPO / "ovs-patches").glob("*.patch")
     for m in re.findall(r"^\+\+\+ b/(\S+\.c)$", p.read_text(), re.M)}
    | {f"lib/{p.name}" for p in (REPO / "lib").glob("awafs*.c")}
    | {f"lib/{p.name}" for d in ("netdev-ext", "ofproto-ext")
       for p in (REPO / d).glob("*.c")})


@pytest.mark.parametrize("path", PATCHED_C)
def test_clang_thread_safety_analysis_is_clean(path):
    """clang's -Wthread-safety (OVS_REQUIRES, OVS_GUARDED_BY, ... of
    compiler.h) finds nothing in what the patches touch, compiled with the
    include paths of the gcc build."""
    ovs = BUILD / "ovs"
    proc = subprocess.run(
        ["clang", "-fsyntax-only", "-DHAVE_CONFIG_H", "-I.", "-Iinclude",
         "-Ilib", "-mssse3", "-I/usr/include/dpdk",
         "-I/usr/include/x86_64-linux-gnu/dpdk", "-include", "rte_config.h",
         "-Wthread-safety", "-Werror=thread-safety", path],
        cwd=ovs, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "thread-safety" not in proc.stderr, proc.stderr[-4000:]


def fake_tarball(path, version, util_c="int x;\n"):
    """A minimal stand-in for the OVS tarball: configure.ac + lib/util.c."""
    src = path.parent / f"src-{version}"
    (src / "openvswitch" / "lib").mkdir(parents=True)
    (src / "openvswitch" / "configure.ac").write_text(
        f"AC_INIT(openvswitch, {version}, bugs@openvswitch.org)\n")
    (src / "openvswitch" / "lib" / "util.c").write_text(util_c)
    with tarfile.open(path, "w:gz") as tar:
        tar.add(src / "openvswitch", arcname="openvswitch")
    return path


def test_unpack_refuses_other_versions(tmp_path):
    tarball = fake_tarball(tmp_path / "ovs.tar.gz", "3.2.0")
    proc = subprocess.run([str(SCRIPTS / "ovs-unpack.sh"), str(tarball),
                           str(tmp_path / "ovs")],
                          capture_output=True, text=True)
    assert proc.returncode != 0
    assert "'3.2.0', AWAFS needs exactly 3.1.0" in proc.stderr
    assert not (tmp_path / "ovs").exists()


def write_patch(patches, name, old, new):
    (patches / name).write_text(
        "--- a/lib/util.c\n+++ b/lib/util.c\n@@ -1 +1 @@\n"
        f"-{old}\n+{new}\n")


def test_patch_names_the_failing_patch_and_repatches(tmp_path):
    tarball = fake_tarball(tmp_path / "ovs.tar.gz", "3.1.0")
    ovs = tmp_path / "ovs"
    subprocess.run([str(SCRIPTS / "ovs-unpack.sh"), str(tarball), str(ovs)],
                   check=True, capture_output=True)
    patches = tmp_path / "patches"
    patches.mkdir()
    write_patch(patches, "0001-good.patch", "int x;", "int y;")
    (patches / "series").write_text("0001-good.patch\n")
    run = [str(SCRIPTS / "ovs-patch.sh"), str(tarball), str(ovs),
           str(patches)]

    subprocess.run(run, check=True, capture_output=True)
    assert (ovs / "lib/util.c").read_text() == "int y;\n"
    # Re-running restores util.c first, so the series applies again.
    subprocess.run(run, check=True, capture_output=True)
    assert (ovs / "lib/util.c").read_text() == "int y;\n"
    # An edited patch replaces the old change instead of stacking on it.
    write_patch(patches, "0001-good.patch", "int x;", "int z;")
    subprocess.run(run, check=True, capture_output=True)
    assert (ovs / "lib/util.c").read_text() == "int z;\n"

    # Two patches touching the same file re-apply cleanly too.
    (patches / "0002-again.patch").write_text(
        "--- a/lib/util.c\n+++ b/lib/util.c\n@@ -1 +1 @@\n-int z;\n+int v;\n")
    (patches / "series").write_text("0001-good.patch\n0002-again.patch\n")
    subprocess.run(run, check=True, capture_output=True)
    subprocess.run(run, check=True, capture_output=True)
    assert (ovs / "lib/util.c").read_text() == "int v;\n"

    write_patch(patches, "0002-bad.patch", "int nope;", "int w;")
    (patches / "series").write_text("0001-good.patch\n0002-bad.patch\n")
    proc = subprocess.run(run, capture_output=True, text=True)
    assert proc.returncode != 0
    assert "0002-bad.patch does not apply" in proc.stderr

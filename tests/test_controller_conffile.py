"""The controller's configuration file (awafs_controller/conffile.py): a
good file is the command line it stands for, and each kind of broken file
is refused at start with its line, the reason and EX_CONFIG, which the
packaged unit does not restart on."""

import subprocess
import sys

import pytest

from awafs_controller.__main__ import EX_CONFIG, parse_args
from tests.conftest import REPO

GOOD = """\
# The example of packages/debian/awafs-controller.conf.
[controller]
ofp-port = 6654
ofp-host = 127.0.0.1
rest = 0.0.0.0:8081
verbose = yes

[ovsdb]
0000000000000001 = unix:/var/run/openvswitch/db.sock
00000000000000a2 = tcp:10.0.0.2:6640
"""


def write(tmp_path, text):
    path = tmp_path / "awafs-controller.conf"
    path.write_text(text)
    return path


def test_a_file_sets_every_option(tmp_path):
    args = parse_args(["--config", str(write(tmp_path, GOOD))])
    assert (args.ofp_port, args.ofp_host, args.rest, args.verbose) == \
        (6654, "127.0.0.1", ("0.0.0.0", 8081), True)
    assert args.ovsdb == [("0000000000000001", "unix:/var/run/openvswitch/db.sock"),
                          ("00000000000000a2", "tcp:10.0.0.2:6640")]


def test_the_command_line_overrides_the_file(tmp_path):
    args = parse_args(["--config", str(write(tmp_path, GOOD)),
                       "--rest", "127.0.0.1:9000",
                       "--ovsdb", "3=unix:/tmp/db.sock"])
    assert args.rest == ("127.0.0.1", 9000)
    assert [dpid for dpid, _ in args.ovsdb] == ["0000000000000001", "00000000000000a2",
                                           "0000000000000003"]


def test_the_packaged_file_is_valid():
    args = parse_args(["--config", str(
        REPO / "packages/debian/awafs-controller.conf")])
    assert args.rest == ("127.0.0.1", 8080)
    assert args.ovsdb == [("0000000000000001", "unix:/var/run/openvswitch/db.sock")]


@pytest.mark.parametrize("text, line, reason", [
    ("[controller]\nrest = 8080\n", 2, "8080: not HOST:PORT"),
    ("[controller]\nrest = h:99999\n", 2, "99999: not a port (1-65535)"),
    ("[controller]\n\nofp-port = six\n", 3, "six: not a port (1-65535)"),
    ("[controller]\nrest-api = h:1\n", 2, "unknown option 'rest-api'"),
    ("[controller]\nverbose = maybe\n", 2,
     "verbose: 'maybe' is not true or false"),
    ("[controller]\nofp-port = 1\nofp-port = 2\n", 3,
     "'ofp-port' is already set on line 2"),
    ("rest = h:1\n", 1, "'rest' outside a section"),
    ("[controler]\n", 1, "unknown section [controler]"),
    ("[ovsdb\n", 1, "'[ovsdb': a section is [NAME]"),
    ("[ovsdb]\n1 unix:/x\n", 2, "'1 unix:/x': not 'key = value'"),
    ("[ovsdb]\nswitch1 = unix:/x\n", 2, "switch1"),
    ("[ovsdb]\n1 =\n", 2, "1=: not DPID=REMOTE"),
])
def test_a_broken_file_is_refused_with_its_line(tmp_path, capsys, text,
                                                  line, reason):
    path = write(tmp_path, text)
    with pytest.raises(SystemExit) as stop:
        parse_args(["--config", str(path)])
    assert stop.value.code == EX_CONFIG
    message = capsys.readouterr().err
    assert message.startswith(f"awafs-controller: {path}:{line}: "), message
    assert reason in message


def test_an_unreadable_file_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        parse_args(["--config", str(tmp_path / "absent.conf")])
    assert stop.value.code == EX_CONFIG
    assert "No such file" in capsys.readouterr().err


def test_the_command_exits_with_ex_config_before_it_starts(tmp_path):
    """The exit status the unit's RestartPreventExitStatus names."""
    path = write(tmp_path, "[controller]\nrest = nowhere\n")
    run = subprocess.run([sys.executable, "-m", "awafs_controller",
                          "--config", str(path)], capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == EX_CONFIG == 78
    assert f"{path}:2: nowhere: not HOST:PORT" in run.stderr


def test_check_config_says_ok_or_why_not(tmp_path):
    """What the packaged init script runs before it starts the daemon."""
    def check(text):
        return subprocess.run(
            [sys.executable, "-m", "awafs_controller", "--config",
             str(write(tmp_path, text)), "--check-config"],
            capture_output=True, text=True, timeout=60)
    good = check(GOOD)
    assert (good.returncode, good.stdout) == \
        (0, "awafs-controller: configuration OK\n")
    bad = check("[ovsdb]\nx = y\n")
    assert bad.returncode == EX_CONFIG and ":2: " in bad.stderr

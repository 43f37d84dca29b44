"""The README's controller section, as a newcomer runs it: its three
commands (a sandboxed switch, the controller, curl) from README.md itself,
then the switch's configuration read back through the controller."""

import json
import os
import re
import signal
import subprocess
import urllib.request

from tests.conftest import REPO
from testbed.switch import wait_until


def readme_commands():
    """The controller section's commands, continuation lines joined."""
    text = (REPO / "README.md").read_text()
    section = text.split("## Controller", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"\n((?:    .*\n)+)", section).group(1)
    return [c.strip() for c in
            re.sub(r"\\\n\s*", "", block).strip().split("\n")]


def get(url):
    with urllib.request.urlopen(url, timeout=5) as resp:
        return json.loads(resp.read())


def test_readme_controller_in_three_commands():
    commands = readme_commands()
    assert len(commands) == 3
    env = dict(os.environ, AWAFS_TEST_LOCK_HELD="1")
    background = []
    try:
        for command in commands[:2]:
            assert command.endswith("&")
            background.append(subprocess.Popen(
                command[:-1], shell=True, cwd=REPO, env=env,
                start_new_session=True, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL))
        switch = "http://127.0.0.1:8080/switches/0000000000000001"

        def connected():
            try:
                return any(s["connected"] for s in
                           get("http://127.0.0.1:8080/switches")["switches"])
            except OSError:
                return False
        assert wait_until(connected, 60)
        curl = subprocess.run(commands[2] + " -s -w '%{http_code}'",
                              shell=True, cwd=REPO, capture_output=True,
                              text=True, timeout=30)
        assert curl.stdout.endswith("200"), curl.stdout + curl.stderr
        assert wait_until(lambda: len(get(f"{switch}/ports/dpdk0")
                                      ["queues"]) == 4, 10)
        assert get(f"{switch}/ports/dpdk0")["config"]["percentiles"] \
            == "10,20,30"
    finally:
        # Each was started in its own session: signal the whole group, and
        # wait for all of it (the shell may go first), so that nothing of
        # it is still tearing down (the switch its veth pair) when the next
        # test starts.
        for proc in reversed(background):
            os.killpg(proc.pid, signal.SIGTERM)
            if not wait_until(lambda: group_gone(proc), 30):
                os.killpg(proc.pid, signal.SIGKILL)
                wait_until(lambda: group_gone(proc), 10)


def group_gone(proc):
    """No process is left in the group 'proc' leads (its own reaped)."""
    proc.poll()
    try:
        os.killpg(proc.pid, 0)
    except ProcessLookupError:
        return True
    return False

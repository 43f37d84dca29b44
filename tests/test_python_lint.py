"""pyflakes over the project's Python: no unused imports or names, no
undefined names."""

import subprocess
import sys

from tests.conftest import REPO


def test_pyflakes():
    dirs = ("tests", "testbed", "demo", "bench", "eval", "ofproto-ext",
            "ryu-app", "host-agent", "sim", "packages")
    paths = [str(REPO / d) for d in dirs if (REPO / d).is_dir()]
    proc = subprocess.run([sys.executable, "-m", "pyflakes", *paths],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr

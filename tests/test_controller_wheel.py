"""The controller's wheel (packages/build-wheel.sh, ryu-app/pyproject.toml)
carries everything the controller reads: a Python with only the wheel's
files (no repository beside them) reads the switch's key and property
tables, serves the dashboard and openapi.yaml, and checks a
configuration."""

import subprocess
import sys
import zipfile

from tests.conftest import REPO


def test_the_wheel_works_without_the_repository(tmp_path):
    subprocess.run([str(REPO / "packages" / "build-wheel.sh"),
                    str(tmp_path)], check=True, capture_output=True)
    wheel, = tmp_path.glob("awafs_controller-*-py3-none-any.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for name in ("defs/netdev-dpdk-awafs-keys.def", "defs/awafs-props.def",
                 "static/dashboard.html", "static/dashboard.js",
                 "static/openapi.yaml", "conffile.py"):
        assert f"awafs_controller/{name}" in names, name
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    code = """
import sys
from awafs_controller import keys, props, rest
assert not any(p.is_symlink() for p in (keys.DEF_FILE, props.DEF_FILE))
assert str(keys.DEF_FILE).startswith(sys.argv[1])
print(len(keys.parse(keys.DEF_FILE.read_text())),
      len(props.parse(props.DEF_FILE.read_text())))
for name, _ in rest.STATIC.values():
    assert (rest.HERE / "static" / name).read_bytes()
"""
    # python -c puts its current directory first on the path: the wheel's
    # files come before the clone's editable install.
    run = subprocess.run([sys.executable, "-c", code, str(site)], cwd=site,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert [int(n) > 10 for n in run.stdout.split()] == [True, True]

"""The project's Python is one installed package set (pyproject.toml, made
editable in build/venv by make setup): no module edits sys.path, nothing
sets PYTHONPATH, and the packages import by their qualified names from any
directory."""

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

from tests.conftest import REPO

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())


def tracked(*patterns):
    out = subprocess.run(["git", "-C", str(REPO), "ls-files", *patterns],
                         capture_output=True, text=True, check=True).stdout
    return [REPO / f for f in out.split()]


def test_no_module_touches_sys_path():
    found = []
    for path in tracked("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (isinstance(node, ast.Attribute) and node.attr == "path"
                    and isinstance(node.value, ast.Name)
                    and node.value.id == "sys"):
                found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert not found, "sys.path used at " + ", ".join(found)


def test_nothing_sets_pythonpath():
    word = "PYTHON" + "PATH"
    found = [str(p.relative_to(REPO)) for p in tracked()
             if p.is_file() and p.suffix not in (".md", ".patch")
             and p != Path(__file__) and word.encode() in p.read_bytes()]
    assert not found, f"{word} in " + ", ".join(found)


def test_every_python_folder_is_an_installed_package():
    """A folder of the repository with an __init__.py is a package of
    pyproject.toml (but the test suite, which pytest imports from the
    clone), and pyproject.toml lists nothing else."""
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    mapped = PYPROJECT["tool"]["setuptools"]["package-dir"]
    folders = {p.parent.name for p in REPO.glob("*/__init__.py")} - {"tests"}
    assert listed == folders | set(mapped)
    for name, where in mapped.items():
        assert (REPO / where / "__init__.py").is_file()


def test_packages_import_from_outside_the_clone(tmp_path):
    """The venv's Python, isolated (-I: no PYTHON* variables, not the
    current directory), in a directory outside the clone, imports this
    clone's modules by their qualified names."""
    modules = ["testbed.switch", "eval.run", "eval.report", "bench.run",
               "sim.karuna_thresholds", "sim.tfs_model", "demo.awafs_demo",
               "awafs_controller.rest"]
    code = ("import importlib, sys\n"
            "for m in sys.argv[1:]:\n"
            "    print(importlib.import_module(m).__file__)\n")
    proc = subprocess.run([sys.executable, "-I", "-c", code, *modules],
                          cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    files = proc.stdout.split()
    assert len(files) == len(modules)
    for f in files:
        assert f.startswith(str(REPO) + "/"), f


def test_console_script():
    """pyproject.toml's commands are in the venv."""
    bindir = REPO / "build" / "venv" / "bin"
    for name in PYPROJECT["project"]["scripts"]:
        assert (bindir / name).is_file(), name

"""Every program the project executes is installed by 'make setup'.

The programs list in build-aux/setup-debian.sh names each program the
tests, the testbed, the demo, the benchmarks, the evaluation and the build
run, with the Debian package that provides it; 'make setup' checks each with
'command -v'.  This test reads the project's Python, shell and Makefile
sources, collects the programs they execute, and fails on one missing from
that list, so a program that only the developer's machine has cannot slip
in again."""

import ast
import re
import shlex
import subprocess

from tests.conftest import REPO

SETUP = REPO / "build-aux/setup-debian.sh"
PYTHON_DIRS = ("tests", "testbed", "demo", "bench", "eval", "host-agent",
               "ryu-app", "build-aux", "sim", "packages")
SHELL_DIRS = ("build-aux", "vswitchd-conf", "ci", ".ci", "host-agent",
              "tests", "demo", "bench", "eval", "packages")

# Calls whose arguments are a command line: subprocess's, and the testbed's
# wrappers that run one in a network namespace (Host.run/popen).
RUNNERS = {"run", "Popen", "call", "check_call", "check_output", "popen",
           "spawn"}
# Constructors that run the command line given as a list argument.
LAUNCHERS = {"__init__", "Server"}
# Shell words that are not programs: keywords and prefixes, which a
# command follows, and builtins, whose arguments are not commands.
SHELL_WORDS = {
    "if", "then", "else", "elif", "fi", "for", "in", "do", "done", "while",
    "until", "case", "esac", "!", "{", "}", "(", ")", "exec", "command",
}
SHELL_BUILTINS = {
    "set", "cd", "echo", "printf", "exit", "return", "shift", "test", "[",
    "]", "read", "local", "export", ":", "true", "false", "trap", "wait",
    "eval", ".", "unset", "break", "continue", "kill", "umask", "source",
}


def listed_programs():
    """{program: package} from the programs list of the setup script."""
    text = SETUP.read_text()
    block = re.search(r'^programs="(.*?)"', text, re.S | re.M)
    assert block, f"no programs=\"...\" list in {SETUP}"
    pairs = {}
    for line in block.group(1).splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            program, package = line.split(":")
            pairs[program] = package
    return pairs


def _const_str(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _list_words(node):
    """The words of a list/tuple literal, None where not a literal."""
    return [_const_str(e) for e in node.elts]


def _command_words(call, lists):
    """The words of the command line that 'call' runs, None where not a
    literal: f(["prog", ...]), f("prog", ...), f(*["prog", ...]) or
    f(*name) with 'name' assigned a list literal ('lists')."""
    if not call.args:
        return []
    first = call.args[0]
    if isinstance(first, ast.Starred):
        first = first.value
        if isinstance(first, ast.Name) and first.id in lists:
            return lists[first.id]
    if isinstance(first, (ast.List, ast.Tuple)):
        return _list_words(first)
    return [_const_str(a.value if isinstance(a, ast.Starred) else a)
            for a in call.args]


def _programs_of_words(words):
    """The programs a command line starts: its first word, and the one after
    'ip netns exec NS' where those are literal."""
    found = []
    if words and words[0] is not None:
        found.append(words[0])
    if words[:3] == ["ip", "netns", "exec"] and len(words) > 4 \
            and words[4] is not None:
        found.append(words[4])
    return found


def python_programs(path):
    tree = ast.parse(path.read_text(), str(path))
    # List literals assigned to names, for f(*args).
    lists = {t.id: _list_words(node.value) for node in ast.walk(tree)
             if isinstance(node, ast.Assign)
             and isinstance(node.value, (ast.List, ast.Tuple))
             for t in node.targets if isinstance(t, ast.Name)}
    found = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else \
            getattr(func, "id", None)
        if name == "ip":                        # testbed.traffic.ip()
            found.add("ip")
            continue
        if name in RUNNERS:
            words = [_command_words(node, lists)]
        elif name in LAUNCHERS:
            # A class that runs its list argument (testbed.servers).
            words = [_list_words(a) for a in node.args
                     if isinstance(a, (ast.List, ast.Tuple))]
        else:
            continue
        for w in words:
            for prog in _programs_of_words(w):
                if "/" not in prog and re.fullmatch(r"[\w.+-]+", prog):
                    found.add(prog)
    return found


def shell_programs(text):
    """First words of the commands of a shell text (scripts, Makefile
    recipes): at a line start and after '|', '&&', '||', ';', '(' and
    '$(', quotes respected.  Multi-line quoted assignments (word lists) and
    '${...}' expansions are not commands."""
    found = set()
    functions = set(re.findall(r"^\s*(\w+)\s*\(\)", text, re.M))
    text = re.sub(r"\\\n", " ", text)
    text = re.sub(r'^\s*\w+="[^"]*"', "", text, flags=re.M)
    text = re.sub(r"\$\{[^}]*\}", "x", text).replace("$(", "(")
    for line in text.splitlines():
        lexer = shlex.shlex(line, posix=True,
                            punctuation_chars=True)
        lexer.whitespace_split = True
        try:
            tokens = list(lexer)
        except ValueError:
            continue
        at_start = True
        skip = False
        for tok in tokens:
            if tok in ("|", "||", "&&", ";", "(", ";;", "&"):
                at_start, skip = True, False
                continue
            if not at_start or skip:
                continue
            if tok in ("for", "case") or tok in SHELL_BUILTINS:
                skip = True
            elif tok in SHELL_WORDS or re.match(r"^\w+=", tok):
                continue
            elif tok in functions:
                pass
            elif re.fullmatch(r"[a-z][\w.+-]*", tok):
                found.add(tok)
            at_start = False
    return found


def makefile_recipes():
    """The Makefile's recipe lines as shell: '@'/'-' prefixes dropped,
    make's own '$(VAR)' and '$(function ...)' replaced by a word that is no
    program name (they are the build's tools: $(CC), $(MAKE), the venv's
    python), '$$' unescaped."""
    text = re.sub(r"\\\n\t?", " ", (REPO / "Makefile").read_text())
    recipes = "\n".join(line[1:].lstrip("@-") for line in text.splitlines()
                        if line.startswith("\t"))
    return re.sub(r"(?<!\$)\$\([^()]*\)", "MAKEVAR",
                  recipes).replace("$$", "$")


def scanned_programs():
    """{program: [source files]} for the whole project."""
    where = {}

    def add(progs, src):
        for p in progs:
            where.setdefault(p, []).append(str(src.relative_to(REPO)))

    for d in PYTHON_DIRS:
        for path in sorted((REPO / d).rglob("*.py")):
            add(python_programs(path), path)
    for d in SHELL_DIRS:
        base = REPO / d
        if not base.is_dir():
            continue
        for path in sorted(base.iterdir()):
            if path.is_file() and (path.suffix == ".sh" or
                                   path.read_bytes()[:2] == b"#!") and \
                    path.suffix != ".py":
                add(shell_programs(path.read_text()), path)
    add(shell_programs(makefile_recipes()), REPO / "Makefile")
    return where


def built_programs():
    """What 'make' puts in build/bin (OVS's programs, the AWAFS tools):
    the project's own, run from there, not from a Debian package."""
    text = (REPO / "Makefile").read_text()
    ovs = re.search(r"^OVS_PROGRAMS :=(.*?)\n\n", text, re.S | re.M).group(1)
    names = {w.rsplit("/", 1)[-1] for w in ovs.replace("\\", " ").split()}
    return names | set(re.findall(r"^\$\(BIN\)/([\w.-]+):", text, re.M))


def test_every_executed_program_is_listed():
    listed = listed_programs()
    built = built_programs()
    missing = {p: srcs for p, srcs in scanned_programs().items()
               if p not in listed and p not in built}
    assert not missing, (
        "programs executed but not in the programs list of "
        f"{SETUP.relative_to(REPO)} (add 'program:package'): {missing}")


def test_setup_refuses_a_listed_program_it_cannot_find(tmp_path):
    """setup-debian.sh's guard fails, naming it, on a listed program that
    is not on the machine (here one whose package, coreutils, is installed
    but does not provide it), so a program missing from its package list
    stops 'make setup' instead of a test.  (Whether the listed packages are
    installed cannot be checked from inside 'make check': setup ran
    first.)"""
    script = (tmp_path / "build-aux" / "setup-debian.sh")
    script.parent.mkdir()
    text = SETUP.read_text()
    assert "\nsed:sed\n" in text
    script.write_text(text.replace("\nsed:sed\n",
                                   "\nsed:sed\nawafs-absent:coreutils\n"))
    for name in ("requirements.txt", "pyproject.toml"):
        (tmp_path / name).write_bytes((REPO / name).read_bytes())
    proc = subprocess.run(["sh", str(script), str(REPO / "build" / "venv")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert ("programs the project runs are missing: awafs-absent "
            "(Debian package coreutils)") in proc.stderr


def test_scanner_sees_the_usual_forms():
    src = '''
import subprocess
subprocess.run(["ping", "-c", "1"])
subprocess.Popen(["ip", "netns", "exec", "ns1", "nginx", "-c", "x"])
host.run("curl", "-s", url)
host.popen(*["memcached", "-p", "1"])
ip("link", "del", "x")
args = ["wrk", "-t1"]
host.run(*args)
subprocess.run(["ip", "netns", "exec", h.ns, "redis-cli", "-h", addr])
super().__init__(host, ["nginx", "-c", conf], port)
subprocess.run([str(BIN / "ovs-vsctl"), "show"])
'''
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "x.py"
        p.write_text(src)
        assert python_programs(p) == {"ping", "ip", "nginx", "curl",
                                      "memcached", "wrk", "redis-cli"}
    assert shell_programs("a=1; if tar tzf x | grep -q y; then\n"
                          "  $(sed -n p f) && patch -p1\nfi\n") == \
        {"tar", "grep", "sed", "patch"}

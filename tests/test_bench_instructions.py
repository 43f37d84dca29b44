"""bench/instructions.py reads callgrind's dumps right: a function's calls,
and every instruction counted once, in the function that ran it."""

import subprocess

from bench.instructions import parse_dump

PROGRAM = r"""
static volatile int sink;

__attribute__((noinline)) static int leaf(int x)
{
    for (int i = 0; i < 10; i++) {
        sink += x * i;
    }
    return sink;
}

int main(void)
{
    int s = 0;

    for (int i = 0; i < 1000; i++) {
        s += leaf(i);
    }
    return s == 42;
}
"""


def test_calls_and_self_costs(tmp_path):
    src, prog, out = (tmp_path / "p.c", tmp_path / "p",
                      tmp_path / "callgrind.out")
    src.write_text(PROGRAM)
    subprocess.run(["gcc", "-O1", "-g", "-o", str(prog), str(src)],
                   check=True)
    subprocess.run(["valgrind", "--tool=callgrind", "-q",
                    f"--callgrind-out-file={out}", str(prog)], check=True)
    total, self_ir, calls = parse_dump(out)
    assert calls["leaf"] == 1000
    # The calls' inclusive costs are not counted again in their callers.
    assert sum(self_ir.values()) == total
    # The loop of ten in leaf() is most of main()'s work, and main()'s own
    # loop of a thousand is more than a thousandth of it.
    assert self_ir["leaf"] > 10 * 1000 * 3
    assert 1000 * 3 <= self_ir["main"] < self_ir["leaf"]

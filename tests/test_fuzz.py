"""Bounded libFuzzer run of the header parser (ASan + UBSan).  `make fuzz`
runs it for longer."""

import subprocess
import sys

from conftest import BUILD, REPO

RUNS = 300000


def test_parser_fuzz_smoke(tmp_path):
    fuzzer = BUILD / "fuzz" / "fuzz-hdr"
    assert fuzzer.exists(), f"{fuzzer} missing: run `make`"
    corpus = tmp_path / "corpus"
    subprocess.run([sys.executable, str(REPO / "tests/fuzz/make_seeds.py"),
                    str(corpus)], check=True)
    proc = subprocess.run(
        [str(fuzzer), f"-runs={RUNS}", "-seed=1",
         f"-dict={REPO / 'tests/fuzz/awafs.dict'}", str(corpus)],
        capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert f"Done {RUNS} runs" in proc.stderr
    assert "ERROR: AddressSanitizer" not in proc.stderr
    assert "runtime error" not in proc.stderr

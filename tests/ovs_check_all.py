"""`make check-ovs`: Open vSwitch's whole testsuite on the patched tree,
compared with the failures of the stock 3.1.0 tarball on this machine
(tests/ovs-known-failures.txt, one test title per line).  Fails on any
other failure; a known failure that passes is reported, not an error.
Failed tests run once more, alone (OVS's RECHECK=yes, as its own CI does),
so that a test that failed only under the load of the parallel run does
not count.

usage: python3 tests/ovs_check_all.py OVS_BUILD_DIR JOBS
"""

import re
import subprocess
import sys
from pathlib import Path

KNOWN = Path(__file__).resolve().parent / "ovs-known-failures.txt"


def failed_titles(log):
    """Titles of the failed tests in an autotest testsuite.log (not the
    skipped ones, which the summary lists after them)."""
    summary = log.split("## Summary of the failures. ##", 1)
    if len(summary) < 2:
        return set()
    block = summary[1].split("## Detailed failed tests. ##", 1)[0]
    block = block.split("Skipped tests:", 1)[0]
    return {m.group(1).strip() for m in
            re.finditer(r"^\s*\d+: \S+:\d+\s+(.+)$", block, re.M)}


def main():
    ovs, jobs = Path(sys.argv[1]), sys.argv[2]
    proc = subprocess.run(["make", "-C", str(ovs), "check",
                           f"TESTSUITEFLAGS=-j{jobs}", "RECHECK=yes"],
                          capture_output=True, text=True)
    log_path = ovs / "tests" / "testsuite.log"
    log = log_path.read_text(errors="replace")
    m = re.search(r"^(\d+) tests? were successful|^ERROR: (\d+) tests? "
                  r"w[ae]re run,\s*(\d+) failed", log, re.M)
    print(m.group(0) if m else proc.stdout[-2000:])
    known = {line.strip() for line in KNOWN.read_text().splitlines()
             if line.strip() and not line.startswith("#")}
    failed = failed_titles(log)
    for title in sorted(known - failed):
        print(f"known failure passed: {title}")
    new = sorted(failed - known)
    for title in new:
        print(f"NEW FAILURE: {title}")
    if proc.returncode and not failed:
        print(f"the testsuite did not run: see {log_path}")
        sys.exit(1)
    sys.exit(1 if new else 0)


if __name__ == "__main__":
    main()

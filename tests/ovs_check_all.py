"""`make check-ovs`: Open vSwitch's whole testsuite on the patched tree,
compared with the failures of the stock 3.1.0 tarball on this machine
(tests/ovs-known-failures.txt, one "NUMBER: TITLE" per line).  Every
failure of the parallel run is printed; the failed tests then run once
more, alone (as OVS's RECHECK=yes does, without overwriting the first
run's log), so that a test that failed only under the load of the
parallel run does not count.  Fails on any failure that is not a known
one, by number and title, and if the testsuite did not run; a known
failure that passes is reported, not an error.

usage: python3 -m tests.ovs_check_all OVS_BUILD_DIR JOBS
"""

import re
import shutil
import subprocess
import sys
from pathlib import Path

KNOWN = Path(__file__).resolve().parent / "ovs-known-failures.txt"


def failures(log):
    """The failed tests of an autotest testsuite.log as {number: title}
    (not the skipped ones, which the summary lists after them)."""
    summary = log.split("## Summary of the failures. ##", 1)
    if len(summary) < 2:
        return {}
    block = summary[1].split("## Detailed failed tests. ##", 1)[0]
    block = block.split("Skipped tests:", 1)[0]
    return {int(m.group(1)): m.group(2).strip() for m in
            re.finditer(r"^\s*(\d+): \S+:\d+\s+(.+)$", block, re.M)}


def known_failures(text):
    """tests/ovs-known-failures.txt's entries as {number: title}."""
    known = {}
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            number, title = line.split(":", 1)
            known[int(number)] = title.strip()
    return known


def result_line(log):
    m = re.search(r"^(\d+) tests? were successful|^ERROR: (\d+) tests? "
                  r"w[ae]re run,\s*(\d+) failed", log, re.M)
    return m.group(0) if m else None


def run(ovs, flags):
    """'make check' in 'ovs' with TESTSUITEFLAGS 'flags'; returns its exit
    status and the testsuite.log it wrote, or None if it wrote none (the
    log of an earlier run is removed first)."""
    log_path = ovs / "tests" / "testsuite.log"
    log_path.unlink(missing_ok=True)
    proc = subprocess.run(["make", "-C", str(ovs), "check",
                           f"TESTSUITEFLAGS={flags}"],
                          capture_output=True, text=True)
    if not log_path.exists():
        print(proc.stdout[-2000:] + proc.stderr[-2000:])
        return proc.returncode, None
    return proc.returncode, log_path.read_text(errors="replace")


def verdict(first, again, known):
    """What to report, and whether to fail, given the parallel run's
    failures 'first', those that failed again alone 'again' (both
    {number: title}) and the 'known' ones."""
    lines = [f"failed in the parallel run: {n}: {t}"
             for n, t in sorted(first.items())]
    lines += [f"passed alone: {n}: {t}" for n, t in sorted(first.items())
              if n not in again]
    lines += [f"known failure passed: {n}: {t}"
              for n, t in sorted(known.items()) if again.get(n) != t]
    new = {n: t for n, t in again.items() if known.get(n) != t}
    lines += [f"NEW FAILURE: {n}: {t}" for n, t in sorted(new.items())]
    return lines, bool(new)


def main():
    ovs, jobs = Path(sys.argv[1]), sys.argv[2]
    status, log = run(ovs, f"-j{jobs}")
    if log is None:
        print("the testsuite did not run (no testsuite.log)")
        sys.exit(1)
    print(result_line(log) or log[-2000:])
    first = failures(log)
    if status and not first:
        print("the testsuite failed with no failed test: see its log")
        sys.exit(1)
    again = {}
    if first:
        saved = ovs / "tests" / "testsuite-parallel.log"
        shutil.copy(ovs / "tests" / "testsuite.log", saved)
        print(f"(the parallel run's log: {saved})")
        _, relog = run(ovs, " ".join(str(n) for n in sorted(first)))
        if relog is None:
            print("the recheck did not run (no testsuite.log)")
            sys.exit(1)
        again = failures(relog)
    lines, failed = verdict(first, again, known_failures(KNOWN.read_text()))
    print("\n".join(lines))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

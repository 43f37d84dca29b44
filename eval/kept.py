"""The runs kept in the repository (eval/results/FOLDER/: runs.tar.gz and
seeds.md) and the sections of seeds.md that the report derives from them.

    python3 -m eval.kept pack FOLDER RUNS_DIR
    python3 -m eval.kept derive FOLDER [--check]
    python3 -m eval.kept check

pack writes FOLDER/runs.tar.gz from an eval.run output's RUNS_DIR/runs/
(the same files give the same bytes).  derive extracts it to a temporary
folder, runs eval/report.py there and replaces every section of
FOLDER/seeds.md (from its first '## ' heading on) by the report's section
of that heading, keeping what precedes them (the commands that ran the
runs); a new seeds.md gets the "Seeds pooled" section.  With --check it
changes nothing and fails if a section differs; check does that for every
folder of eval/results/ that has both files, and checks that the static
sweep's reports kept there are what eval/static_sweep.py derives from the
flows kept beside them (make eval-report)."""

import argparse
import gzip
import re
import shlex
import sys
import tarfile
import tempfile
from pathlib import Path

from eval import report

RESULTS = report.REPO / "eval" / "results"
FIRST_SECTIONS = ["Seeds pooled"]
HEADING = re.compile(r"(?m)^## (.+)$")


def pack(folder, runs_dir):
    """runs.tar.gz of runs_dir/runs/: sorted, owner and time fixed."""
    def fixed(info):
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        info.mtime = 0
        return info

    folder.mkdir(parents=True, exist_ok=True)
    files = sorted(p for p in (runs_dir / "runs").rglob("*") if p.is_file())
    with open(folder / "runs.tar.gz", "wb") as raw:
        # mtime=0 in the gzip header too: the same files, the same bytes.
        with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz:
            with tarfile.open(fileobj=gz, mode="w") as tar:
                for p in files:
                    tar.add(p, arcname=str(p.relative_to(runs_dir)),
                            filter=fixed)


def sections(text):
    """{heading: the section's text, its heading line included, without
    its plots (a kept folder has none)}, and the text before the first
    section."""
    marks = list(HEADING.finditer(text))
    head = text[:marks[0].start()] if marks else text
    out = {}
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        body = re.sub(r"(?m)^!\[.*\n\n", "", text[m.start():end])
        out[m.group(1)] = body.rstrip("\n") + "\n"
    return out, head


def derived(folder):
    """The report's sections derived from folder/runs.tar.gz."""
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(folder / "runs.tar.gz") as tar:
            tar.extractall(tmp, **({"filter": "data"}
                                   if hasattr(tarfile, "data_filter")
                                   else {}))
        report.main(["--out", tmp])
        return sections(Path(tmp, "report.md").read_text())[0]


def derive(folder, check=False):
    """Writes (or, with 'check', compares) folder/seeds.md's sections;
    returns the headings that differed."""
    path = folder / "seeds.md"
    kept, head = (sections(path.read_text()) if path.exists()
                  else ({h: "" for h in FIRST_SECTIONS},
                        f"# {folder.name}\n\n"))
    new = derived(folder)
    missing = [h for h in kept if h not in new]
    if missing:
        raise SystemExit(f"{folder}: the report has no section {missing}")
    differ = [h for h in kept if kept[h] != new[h]]
    if not check:
        path.write_text(head + "\n".join(new[h] for h in kept))
    return differ


def static_sweeps_differ():
    """The static sweep's reports kept in eval/results/ (static-sweep-*.md,
    whose third line is the command that ran it) that
    eval/static_sweep.py's report() no longer derives the same from the
    flows kept beside them (the .csv.gz of the same name)."""
    from eval import static_sweep

    out = []
    for md in sorted(RESULTS.glob("static-sweep-*.md")):
        text = md.read_text()
        command = text.splitlines()[2].strip("`")
        args = static_sweep.parse_args(shlex.split(command)[3:])
        rows = static_sweep.read_rows(md.with_suffix(".csv.gz"))
        if static_sweep.report(rows, args) != text:
            out.append(md.name)
    return out


def main(argv):
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("pack")
    p.add_argument("folder", type=Path)
    p.add_argument("runs_dir", type=Path)
    d = sub.add_parser("derive")
    d.add_argument("folder", type=Path)
    d.add_argument("--check", action="store_true")
    sub.add_parser("check")
    args = ap.parse_args(argv)
    if args.cmd == "pack":
        pack(args.folder, args.runs_dir)
        return 0
    folders = ([args.folder] if args.cmd == "derive" else
               sorted(f.parent for f in RESULTS.glob("*/runs.tar.gz")
                      if (f.parent / "seeds.md").exists()))
    check = args.cmd == "check" or args.check
    failed = False
    for folder in folders:
        differ = derive(folder, check)
        if check:
            print(f"{folder.name}: " + (f"differs in {differ}" if differ
                                        else "derived again, the same"))
        failed |= bool(differ) and check
    if args.cmd == "check":
        differ = static_sweeps_differ()
        print("static sweeps: " + (f"{differ} differ" if differ
                                   else "derived again, the same"))
        failed |= bool(differ)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Checks that every result quoted with a confidence interval in the docs
is one that the kept results derive.

    python3 -m eval.doc_numbers [DOC ...]

A quote is a number with its 95 % interval, "-7.4 % [-22.6, +11.3]" or
"0.724 ms [0.634, 0.827]" (a minus sign may be U+2212, as the docs write
it).  The kept results are the markdown files under eval/results/ and
bench/results/, derived from the runs kept beside them (seeds.md, which
`make eval-report` derives again, the static sweep's and the benchmarks'
reports, the ns-3 grids' summaries): a quote is found
there if some cell gives the same three numbers at the quote's precision,
as "P % [L, H]", "M [L, H]", or a mean and its interval in two cells,
"| M | L-H |".  A quote of runs that are not kept (an earlier run of a
command, a figure from before a fix) must be listed, with why, in
eval/doc_numbers_not_kept.txt.  Exit status 1, with each quote found
nowhere, if any is not."""

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RESULTS = [REPO / "eval" / "results", REPO / "bench" / "results"]
NOT_KEPT = REPO / "eval" / "doc_numbers_not_kept.txt"
DOCS = ["README.md", "docs/evaluation.md", "docs/thesis-side-by-side.md",
        "docs/design.md", "docs/reliability.md", "docs/testing.md",
        "sim/ns3/README.md"]

NUM = r"[\u2212+-]?\d+(?:\.\d+)?"
QUOTE = re.compile(rf"({NUM}) ?(?:%|ms|s)?(?:\*\*)?\s+\[({NUM}),\s+({NUM})\]")
# A mean and its interval in one cell, or in two: "| M | L-H |".
IN_CELL = re.compile(rf"({NUM})[^\d\[\]|]{{0,6}}\[({NUM}), ({NUM})\]")
TWO_CELLS = re.compile(rf"({NUM}) \| ({NUM})-({NUM}) \|")


def number(text):
    """(value, decimals) of a number as a doc writes it."""
    text = text.replace("\u2212", "-")
    return float(text), len(text.split(".")[1]) if "." in text else 0


def derived():
    """Every (mean, low, high) that the kept results give."""
    out = set()
    for path in sorted(p for d in RESULTS for p in d.rglob("*.md")):
        text = path.read_text()
        for pattern in (IN_CELL, TWO_CELLS):
            for m in pattern.finditer(text):
                out.add(tuple(number(g)[0] for g in m.groups()))
    return out


def found(quote, values):
    """Whether one of 'values' rounds to the three numbers of 'quote'."""
    parts = [number(g) for g in quote.groups()]
    return any(all(round(v, d) == q for v, (q, d) in zip(value, parts))
               for value in values)


def spaced(text):
    """'text' with each run of white space one space (a quote may wrap)."""
    return " ".join(text.split())


def not_kept():
    """{(doc, quote text)} listed as of runs that are not kept."""
    out = set()
    for line in NOT_KEPT.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            doc, quote = line.split("  #")[0].split(": ", 1)
            out.add((doc.strip(), spaced(quote)))
    return out


def unfound(docs):
    """[(doc, line, quote)] of the quotes in 'docs' found nowhere."""
    values, listed, out = derived(), not_kept(), []
    for doc in docs:
        text = (REPO / doc).read_text()
        for m in QUOTE.finditer(text):
            quote = spaced(m.group(0))
            if (doc, quote) not in listed and not found(m, values):
                out.append((doc, text.count("\n", 0, m.start()) + 1, quote))
    return out


def main(argv):
    docs = argv or DOCS
    missing = unfound(docs)
    for doc, line, quote in missing:
        print(f"{doc}:{line}: {quote}: no kept result gives it")
    if missing:
        print(f"{len(missing)} quotes found in no kept result: derive them "
              "again (eval.kept derive) and quote what they give, or list "
              f"them in {NOT_KEPT.relative_to(REPO)} with why")
        return 1
    print(f"every interval quoted in {len(docs)} docs is a kept result's")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

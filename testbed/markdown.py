"""Markdown tables for the reports (eval/report.py, bench/run.py): a row
from its cells, a table's header and separator from its column names."""


def row(cells):
    """'| a | b |' from the cells a and b (any values, as str() shows
    them)."""
    return "| " + " | ".join(map(str, cells)) + " |"


def head(columns):
    """A table's first two lines: its column names and the separator."""
    return [row(columns), "|" + "---|" * len(columns)]

"""eval/doc_numbers.py: every interval the docs quote is one that a kept
result gives, or is listed as of runs that are not kept."""

from eval import doc_numbers


def test_every_quoted_interval_is_a_kept_result():
    assert doc_numbers.unfound(doc_numbers.DOCS) == []


def test_a_quote_no_kept_result_gives_is_found_in_every_form(
        tmp_path, monkeypatch):
    """Quotes as the docs write them (U+2212 minus signs, bold, wrapped
    across lines, a mean in ms): the kept ones pass at the quote's
    precision, those that differ in any of their three numbers do not,
    and a listed one passes."""
    doc = tmp_path / "doc.md"
    doc.write_text(
        # eval/results/datamining-load50/seeds.md: -2.6 % [-19.4, +18.1],
        # 0.724 ms, 0.638-0.822.
        "kept: \u22122.6 % [\u221219.4, +18.1] and 0.724 ms\n"
        "[0.638, 0.822] and 0.72 ms [0.64, 0.82];\n"
        "bold: **\u22122.6 %** [\u221219.4, +18.1];\n"
        "not kept: \u22122.6 % [\u221219.0, +18.6], \u22122.7 %\n"
        "  [\u221219.4, +18.1], 0.724 ms [0.638, 0.823];\n"
        "listed: +1.0 % [\u22121.0, +3.0].\n")
    listed = tmp_path / "not-kept.txt"
    listed.write_text("# comment\n"
                      f"{doc}: +1.0 % [\u22121.0, +3.0]  # why\n")
    monkeypatch.setattr(doc_numbers, "REPO", tmp_path)
    monkeypatch.setattr(doc_numbers, "NOT_KEPT", listed)
    assert [(line, quote) for _, line, quote
            in doc_numbers.unfound([str(doc)])] == [
        (4, "\u22122.6 % [\u221219.0, +18.6]"),
        (4, "\u22122.7 % [\u221219.4, +18.1]"),
        (5, "0.724 ms [0.638, 0.823]")]

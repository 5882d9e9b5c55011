"""The Definitions appendix: which part of a docs page a caption's reference names, and how it renders."""

from __future__ import annotations

from pathlib import Path

import pytest

from agenthop.harness.errors import AgentHopError
from agenthop.reports import doc_links

MD = ".md"  # names of pages that do not exist are built, so the docs-reference check does not flag them
PAGE = """\
# Metrics

## Definitions

<a id="recall"></a>
### Paper recall (r_i)

True when every gold paper has a delivered read. See [reruns](#reruns) and [cost](other{MD}#cost).

#### Label resolution

A sub-section belongs to its section.

### Per-run metrics

- <a id="accuracy"></a>**accuracy** = mean(is_correct)
  over all items.
  - a nested note
- <a id="conversion"></a>**conversion** = accuracy given recall.

<a id="table-3"></a>
**Tables 3 and 9** are two marts
shown as they are.
<a id="table-9"></a>

<a id="reruns"></a>
### Reruns

| metric | std |
|---|---|
| accuracy | ddof 0 |
""".replace("{MD}", MD)


@pytest.fixture()
def docs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "m.md").write_text(PAGE, encoding="utf-8")
    monkeypatch.setattr(doc_links, "DOCS_DIR", tmp_path)
    doc_links.doc_section.cache_clear()
    doc_links._page_lines.cache_clear()
    yield tmp_path
    doc_links.doc_section.cache_clear()
    doc_links._page_lines.cache_clear()


def test_an_anchor_above_a_heading_names_the_whole_section(docs: Path) -> None:
    s = doc_links.doc_section("m.md#recall")
    assert s.title == "Paper recall (r_i)"
    assert "True when every gold paper" in s.markdown and "A sub-section belongs" in s.markdown
    assert "Per-run metrics" not in s.markdown  # stops at the next heading of its level


def test_a_heading_slug_names_its_section(docs: Path) -> None:
    s = doc_links.doc_section("m.md#per-run-metrics")
    assert s.title == "Per-run metrics"
    assert "**accuracy**" in s.markdown and "**conversion**" in s.markdown and "Reruns" not in s.markdown


def test_an_anchor_in_a_bullet_names_the_bullet_with_its_continuation(docs: Path) -> None:
    s = doc_links.doc_section("m.md#accuracy")
    assert s.title == "accuracy"
    assert s.markdown.splitlines() == ['<a id="accuracy"></a>**accuracy** = mean(is_correct)',
                                       "over all items.", "- a nested note"]  # the bullet's text, not a list


def test_a_missing_anchor_or_page_is_a_clear_error(docs: Path) -> None:
    with pytest.raises(AgentHopError, match="has no anchor 'nope'"):
        doc_links.doc_section("m.md#nope")
    with pytest.raises(AgentHopError, match="docs/absent" + MD):
        doc_links.doc_section("absent" + MD + "#x")


def test_the_appendix_keeps_links_only_between_its_own_entries(docs: Path) -> None:
    defs = doc_links.Definitions()
    link = defs.link("m.md#recall", "how")
    assert link == '<a class="def" href="#def-m-recall" title="docs/m.md#recall">how</a>'
    defs.link("m.md#reruns")
    defs.link("m.md#recall")  # a second use adds no entry
    recall, reruns = defs.appendix()
    assert (recall.id, recall.source, reruns.id) == ("def-m-recall", "docs/m.md#recall", "def-m-reruns")
    assert '<a href="#def-m-reruns">reruns</a>' in recall.html  # an entry of this appendix: linked
    assert "other" + MD not in recall.html and "cost" in recall.html  # not in it: plain text
    assert 'id="' not in recall.html  # the docs' own anchors would clash with the page's ids
    assert "<h4>Label resolution</h4>" in recall.html  # demoted under the entry's h3
    assert "<table>" in reruns.html and "<td>ddof 0</td>" in reruns.html


def test_an_anchor_in_a_paragraph_names_the_paragraph_and_shares_its_entry(docs: Path) -> None:
    s = doc_links.doc_section("m.md#table-9")
    assert s.title == "Tables 3 and 9"
    assert s.markdown.splitlines()[1:] == ["**Tables 3 and 9** are two marts", "shown as they are.",
                                           '<a id="table-9"></a>']
    defs = doc_links.Definitions()
    assert 'href="#def-m-table-3"' in defs.link("m.md#table-3") and 'href="#def-m-table-3"' in defs.link("m.md#table-9")
    assert [e.id for e in defs.appendix()] == ["def-m-table-3"]

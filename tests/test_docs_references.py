"""No file cites a document the repository does not hold.

The project's docs (docs/*.md) are its contract. Code, SQL, YAML, templates, tests and docs may cite
them (`docs/metrics.md#paper-recall`, `metrics.md#reruns` from a report caption or a sibling doc),
and every such citation must resolve: the file exists, and an `#anchor` names a heading or an
explicit `id` in it. Citations of outside documents (a design document, numbered sections of the
reference harness's write-up) are refused, because a user cannot look them up.
"""

from __future__ import annotations

import re
import subprocess
from functools import lru_cache
from pathlib import Path

import pytest

from agenthop.reports.doc_links import heading_slug

REPO = Path(__file__).resolve().parents[1]

#: documents outside the repository that files used to cite (not words such as _LATEX_SPECIALS): the
#: design document, the reference harness's write-up, a numbered section of either (a section sign
#: and a number, which names no file here) and the write-up's numbered bugs ("reference bug N").
#: Spelled in pieces so this file does not match itself.
OUTSIDE_DOCUMENT = re.compile("SP" "EC" r"(?![A-Z])|reference( docu" r"ment)? §|reference docu" "ment"
                              "|\u00a7" r"\s*\d" r"|(?i:\bbug\s*#?\d)")
#: a path to a Markdown file, optionally with an anchor (URLs are not matched: no '/' before)
MD_REF = re.compile(r"(?<![\w/.#-])((?:[\w.-]+/)*[\w-]{2,}\.md)(?![\w(])(?:#([\w-]+))?")
EXPLICIT_ID = re.compile(r"""<a\s+(?:id|name)=["']([^"']+)["']""")


def _tracked_text_files() -> list[Path]:
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                         cwd=REPO, capture_output=True, text=True, check=True).stdout
    files = []
    for rel in sorted(set(out.split("\n"))):
        path = REPO / rel
        if not rel or path.is_symlink() or not path.is_file() or path.suffix in {".png", ".parquet", ".duckdb"}:
            continue
        try:
            path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        files.append(path)
    return files


FILES = _tracked_text_files()


@lru_cache(maxsize=None)
def anchors(doc: Path) -> frozenset[str]:
    text = doc.read_text(encoding="utf-8")
    found = set(EXPLICIT_ID.findall(text))
    found |= {heading_slug(m.group(1)) for m in re.finditer(r"^#+\s+(.*)$", text, re.M)}
    return frozenset(found)


def _resolve(ref: str, source: Path) -> Path | None:
    """A path resolves from the citing file's folder, the repository root or docs/; a bare file name
    (code that writes `latest.md` into its results folder) may be any file of that name."""
    for base in (source.parent, REPO, REPO / "docs", REPO / "src"):  # src/: installed paths (agenthop/docs/…)
        cand = (base / ref).resolve()
        if cand.is_file():
            return cand
    if "/" not in ref:
        return next((f for f in FILES if f.name == ref), None)
    return None


def reference_problems(path: Path) -> list[str]:
    problems = []
    rel = path.relative_to(REPO)
    for n, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        m = OUTSIDE_DOCUMENT.search(line)
        if m:
            problems.append(f"{rel}:{n}: cites a document outside the repository ({m.group(0)!r})")
        for m in MD_REF.finditer(line):
            ref, fragment = m.group(1), m.group(2)
            target = _resolve(ref, path)
            if target is None:
                problems.append(f"{rel}:{n}: {ref} does not exist")
            elif fragment and fragment not in anchors(target):
                problems.append(f"{rel}:{n}: {ref}#{fragment}: no such anchor in {target.relative_to(REPO)}")
    return problems


def test_no_file_cites_a_document_the_repository_does_not_hold() -> None:
    assert FILES, "no files found (is this a git checkout?)"
    problems = [p for path in FILES for p in reference_problems(path)]
    assert not problems, "\n".join(problems[:60])


def test_every_metric_definition_has_an_anchor() -> None:
    ids = anchors(REPO / "docs" / "metrics.md")
    for anchor in ("delivered-read", "paper-recall", "label-resolution", "section-recall", "evidence-contact",
                   "reference-variants", "per-run-metrics", "accuracy", "conversion", "calls-per-turn",
                   "stopping-behaviour", "wrong-read-actions", "tool-sequences", "transitions", "trigrams",
                   "bigram-effects", "early-submit", "accuracy-slices", "wilson", "reruns", "condition-deltas",
                   "paired-comparisons", "cost", "data-quality", "marts"):
        assert anchor in ids, f"docs/metrics.md has no anchor {anchor!r}"


@pytest.mark.parametrize("text, expected", [
    ("see docs/metrics.md#paper-recall", []),
    ("see docs/metrics.md" + "#no-such-anchor", ["no such anchor"]),
    ("see docs/nowhere" + ".md", ["does not exist"]),
    ('{{ definition("reports.md#mcnemar") }}', []),
    ("https://example.org/guide.md is a URL", []),
    ("as " + "SP" + "EC §" "5.2 says", ["outside the repository"]),
    ("(reference " + "§" "3.1)", ["outside the repository"]),
    ("label resolution (\u00a7" "5.3)", ["outside the repository"]),
    ("\u00a7" "6 lists only n", ["outside the repository"]),
    ("as in \u00a7 " "3.4 step 2", ["outside the repository"]),
    ("counting it twice: reference b" "ug 20", ["outside the repository"]),
    ("Reference B" "ug 14: message substrings", ["outside the repository"]),
    ("visible text (bug" " 16)", ["outside the repository"]),
    ("the \u00a7 sign alone, debug 2 runs", []),
    ("SP" "EC_MARTS = ()", ["outside the repository"]),
    ("_LATEX_SPECIALS = {}", []),
])
def test_the_checker_itself(tmp_path: Path, text: str, expected: list[str]) -> None:
    probe = REPO / "tests" / f"_probe_{tmp_path.name}.txt"
    probe.write_text(text + "\n", encoding="utf-8")
    try:
        problems = reference_problems(probe)
    finally:
        probe.unlink()
    assert len(problems) == len(expected)
    for problem, fragment in zip(problems, expected):
        assert fragment in problem


def test_report_captions_link_to_existing_definitions() -> None:
    from agenthop.reports.doc_links import doc_section

    templates = sorted((REPO / "reports" / "templates").glob("*.j2"))
    refs = {ref for t in templates for ref in re.findall(r'definition\("([^"]+)"', t.read_text(encoding="utf-8"))}
    assert len(refs) >= 8, refs
    for ref in refs:
        page, _, fragment = ref.partition("#")
        assert fragment in anchors(REPO / "docs" / page), ref
    for ref in refs:
        assert doc_section(ref).markdown.strip(), f"{ref} names an empty part of the docs"

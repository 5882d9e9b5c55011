"""Every relative Markdown link and image of README.md and docs/*.md resolves.

tests/test_docs_references.py checks citations written as text (`docs/metrics.md#marts`); this file
checks the Markdown links a reader clicks: `[text](path)`, `[text](path#anchor)`, `[text](#anchor)`
and `![alt](picture.png)`. A path resolves from the linking file's folder; an anchor must name a
heading (GitHub's slug, `-1`, `-2` for repeated headings) or an explicit `<a id>` of the target.
Links inside code blocks and inline code are not links and are skipped, as are URLs.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

import pytest

from agenthop.reports.doc_links import heading_slug

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]

_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"!?\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.M)
_EXPLICIT_ID = re.compile(r"""<a\s+(?:id|name)=["']([^"']+)["']""")
_URL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)


def _prose(text: str) -> str:
    """The text without fenced code blocks (headings and links in code do not count)."""
    return _FENCE.sub("", text)


@lru_cache(maxsize=None)
def anchors(doc: Path) -> frozenset[str]:
    text = _prose(doc.read_text(encoding="utf-8"))
    found = set(_EXPLICIT_ID.findall(text))
    seen: dict[str, int] = {}
    for m in _HEADING.finditer(text):
        slug = heading_slug(m.group(1))
        n = seen.get(slug, 0)
        found.add(slug if n == 0 else f"{slug}-{n}")
        seen[slug] = n + 1
    return frozenset(found)


def link_problems(doc: Path) -> list[str]:
    problems = []
    rel = doc.relative_to(REPO) if doc.is_relative_to(REPO) else doc
    for n, line in enumerate(_prose(doc.read_text(encoding="utf-8")).split("\n"), 1):
        for m in _LINK.finditer(_INLINE_CODE.sub("", line)):
            target = m.group(1)
            if _URL.match(target):
                continue
            path, _, fragment = target.partition("#")
            dest = (doc.parent / path).resolve() if path else doc
            if not dest.exists():
                problems.append(f"{rel}: link {target!r}: {path} does not exist")
            elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
                problems.append(f"{rel}: link {target!r}: no heading or id {fragment!r} in {dest.name}")
    return problems


def test_docs_exist() -> None:
    assert len(DOCS) >= 10, DOCS


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_relative_link_and_anchor_resolves(doc: Path) -> None:
    problems = link_problems(doc)
    assert not problems, "\n".join(problems)


def test_the_link_checker_itself(tmp_path: Path) -> None:
    md = ".m" "d"  # spelled apart, so that the repository's citation checker does not read these as citations
    (tmp_path / f"other{md}").write_text("# Other page\n\n## A `code` heading\n\n## Twice\n\n## Twice\n",
                                         encoding="utf-8")
    (tmp_path / "pic.png").write_bytes(b"")
    page = tmp_path / f"page{md}"
    page.write_text(
        "# Title\n<a id=\"explicit\"></a>\n"
        "[ok](other{md}#other-page) [ok](other{md}#a-code-heading) [ok](other{md}#twice-1) [ok](#title)\n"
        "[ok](#explicit) ![ok](pic.png) [url](https://example.org/x{md}#nope) `[code](missing{md})`\n"
        "```\n[in a code block](missing{md})\n# not a heading\n```\n"
        "[bad](missing{md}) [bad](other{md}#nope) [bad](#not-a-heading) ![bad](nopic.png)\n".format(md=md),
        encoding="utf-8")
    problems = link_problems(page)
    assert {p.split("'")[1] for p in problems} == {f"missing{md}", f"other{md}#nope", "#not-a-heading", "nopic.png"}
    assert len(problems) == 4, problems


def test_every_make_target_the_docs_name_exists() -> None:
    """`make demo`, `make bench`, ... in the docs are targets of the Makefile (a renamed target breaks them)."""
    targets = set(re.findall(r"^([a-z][\w-]*):", (REPO / "Makefile").read_text(encoding="utf-8"), re.M))
    named = {m for doc in DOCS for m in re.findall(r"`make ([a-z][\w-]*)", doc.read_text(encoding="utf-8"))}
    assert {"demo", "test"} <= named, named
    assert named <= targets, f"the docs name make targets the Makefile lacks: {sorted(named - targets)}"


def test_every_subcommand_the_docs_name_exists() -> None:
    """`agenthop-harness X` and `agenthop-report X` in the docs name real subcommands."""
    from agenthop.harness.cli import main as harness_main
    from agenthop.reports.calibration import main as calibration_main
    from agenthop.reports.cli import main as report_main

    groups = {"agenthop-harness": set(harness_main.commands), "agenthop-report": set(report_main.commands)}
    named = {(tool, sub) for doc in DOCS
             for tool, sub in re.findall(r"(agenthop-harness|agenthop-report) ([a-z][a-z-]*)", doc.read_text(encoding="utf-8"))}
    unknown = sorted(f"{tool} {sub}" for tool, sub in named if sub not in groups[tool])
    assert named and not unknown, unknown


#: Flags of other programs the docs quote: dbt, Slurm, vLLM, Inspect AI and the reference harness.
OTHER_PROGRAMS_FLAGS = {
    "--full-refresh", "--log-level", "--log-level-file", "--log-path", "--target-path", "--select", "--selector",
    "--exclude", "--threads", "--vars", "--profiles-dir", "--project-dir",                                   # dbt
    "--array", "--cpus-per-task", "--job-name",                                                              # Slurm
    "--enable-auto-tool-choice", "--tool-call-parser",                                                       # vLLM
    "--epochs", "--token-limit", "--model", "--message-limit", "--to",                                       # Inspect
    "--disable-tools", "--text-tools",                                                                       # reference
    "--no-deps",                                                                                             # pip
    "--scans", "--display",                                                                                  # Scout
}


def _our_options() -> set[str]:
    import click

    from agenthop.harness import benchmarks
    from agenthop.harness.benchmarks.sciexplore.judge_cli import main as judge_main
    from agenthop.harness.cli import main as harness_main
    from agenthop.ingest.cli import main as ingest_main
    from agenthop.ingest.dbt_command import main as dbt_main
    from agenthop.ingest.scanners.cli import main as scan_main
    from agenthop.reports.calibration import main as calibration_main
    from agenthop.reports.cli import main as report_main

    opts: set[str] = {"--help", "--version"}

    def collect(cmd: click.Command) -> None:
        for p in cmd.params:
            opts.update(p.opts, p.secondary_opts)
        if isinstance(cmd, click.Group):
            for sub in cmd.commands.values():
                collect(sub)

    for cmd in (harness_main, ingest_main, report_main, dbt_main, judge_main, calibration_main, scan_main):
        collect(cmd)
    for b in benchmarks.available():
        if b.make_command is not None:
            collect(b.make_command())
    return opts


def test_every_option_the_docs_name_exists() -> None:
    """A `--flag` in the docs is an option of one of the project's commands (a renamed option breaks the
    docs), or a flag of a program the docs quote (dbt, Slurm, vLLM, Inspect, the reference harness)."""
    ours = _our_options()
    unknown: dict[str, list[str]] = {}
    for doc in DOCS:
        for n, line in enumerate(doc.read_text(encoding="utf-8").split("\n"), 1):
            for flag in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]+)", line):
                if flag not in ours and flag not in OTHER_PROGRAMS_FLAGS:
                    unknown.setdefault(flag, []).append(f"{doc.name}:{n}")
    assert not unknown, unknown

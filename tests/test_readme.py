"""The README is a new user's map: it names every command and every report, and its pictures exist."""

from __future__ import annotations

import re
from pathlib import Path

import click

from agenthop.harness.cli import main as harness_main
from agenthop.reports.cli import main as report_main

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")


def test_readme_names_every_agenthop_report_subcommand() -> None:
    assert isinstance(report_main, click.Group)
    missing = [name for name in report_main.commands if f"agenthop-report {name}" not in README]
    assert not missing, f"README.md does not name agenthop-report {', '.join(missing)}"


def test_readme_shows_the_whole_pipeline() -> None:
    assert isinstance(harness_main, click.Group)
    for name in harness_main.commands:
        assert f"agenthop-harness {name}" in README, name
    for command in ("agenthop-ingest", "dbt build", "agenthop-dbt", "make demo", "make test"):
        assert command in README, command
    assert "## Using your own models" in README


def test_every_report_has_a_screenshot_in_docs() -> None:
    pictures = re.findall(r"!\[[^\]]*\]\((docs/[^)]+\.png)\)", README)
    assert {Path(p).stem for p in pictures} >= {"compare", "leaderboard", "reruns", "item"}
    for picture in pictures:
        assert (REPO / picture).is_file(), f"{picture} is missing: run docs/screenshots.sh after make demo"

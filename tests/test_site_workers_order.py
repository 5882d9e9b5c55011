"""The order in which reports/site_workers.py hands pages to its worker processes: a page that waits for the pages
before it (a model page, whose links go to the leaderboard and reruns pages written) starts only once every earlier
page of another kind is done, and the pages waiting alike render side by side. A fake builder records when each
page starts and ends (in files, the pages being rendered in forked processes)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from agenthop.reports import site_workers
from agenthop.reports.site_build import Entry

pytestmark = pytest.mark.skipif(not site_workers.can_fork(), reason="the workers are forked")


class _Con:
    def execute(self, _sql: str) -> None:
        return None


class _Warehouse:
    def __init__(self) -> None:
        self.con = _Con()

    def close(self) -> None:
        return None

    def reconnect(self) -> None:
        return None


class _Builder:
    """Renders a page by sleeping its seconds and writing when it started and ended, and which pages were written
    when it was handed out."""

    def __init__(self, log: Path, seconds: dict[str, float]) -> None:
        self.wh, self.log, self.seconds = _Warehouse(), log, seconds
        self.written: set[str] = set()

    def _render(self, entry: Entry) -> None:
        start = time.monotonic()
        time.sleep(self.seconds[entry.rel])
        (self.log / f"{entry.rel}.json").write_text(json.dumps(
            {"start": start, "end": time.monotonic(), "written_before": sorted(self.written)}))
        entry.written = True


def _render(tmp_path: Path, entries: list[Entry], seconds: dict[str, float], workers: int) -> dict[str, Any]:
    builder = _Builder(tmp_path, seconds)
    announced: list[str] = []
    site_workers.render_all(builder, entries, workers, "512MB", lambda _i, e: announced.append(e.rel))  # type: ignore[arg-type]
    assert announced == [e.rel for e in entries]
    assert builder.written == {e.rel for e in entries}
    return {e.rel: json.loads((tmp_path / f"{e.rel}.json").read_text()) for e in entries}


def test_model_pages_wait_for_the_pages_before_them_and_not_for_each_other(tmp_path: Path) -> None:
    entries = [Entry("leaderboard", "board", "board", lambda s: ""),
               Entry("reruns", "reruns", "reruns", lambda s: ""),
               *[Entry("model", f"model {m}", f"model-{m}", lambda s: "", after_earlier=True) for m in "abc"],
               Entry("paper", "paper", "paper", lambda s: "")]
    seconds = {"board": 0.2, "reruns": 1.0, "model-a": 1.5, "model-b": 1.5, "model-c": 0.1, "paper": 0.1}
    t = _render(tmp_path, entries, seconds, workers=2)
    before = max(t["board"]["end"], t["reruns"]["end"])
    for m in ("model-a", "model-b", "model-c"):
        assert t[m]["start"] >= before, m
        assert {"board", "reruns"} <= set(t[m]["written_before"]), m  # the links a model page may make
    # the first two model pages were rendered by the two workers at once, not one after the other
    assert t["model-b"]["start"] < t["model-a"]["end"] and t["model-a"]["start"] < t["model-b"]["end"]


def test_in_one_worker_the_pages_go_in_the_plans_order(tmp_path: Path) -> None:
    entries = [Entry("reruns", "reruns", "reruns", lambda s: ""),
               Entry("model", "model a", "model-a", lambda s: "", after_earlier=True),
               Entry("model", "model b", "model-b", lambda s: "", after_earlier=True)]
    t = _render(tmp_path, entries, {"reruns": 0.1, "model-a": 0.1, "model-b": 0.1}, workers=1)
    assert t["reruns"]["end"] <= t["model-a"]["start"] and t["model-a"]["end"] <= t["model-b"]["start"]

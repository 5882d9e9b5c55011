"""Inspect AI logs for the import tests, written once per test session by Inspect itself."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="the Inspect tests need inspect-ai (the test extra)")

import inspect_fixtures as fx  # noqa: E402


@dataclass(frozen=True)
class InspectLogs:
    eval_logs: list[Path]  # toolbox, one per model, .eval
    json_logs: list[Path]  # toolbox, one per model, .json
    agentdojo: Path  # hand-written in the published AgentDojo task's shapes


@pytest.fixture(scope="session")
def inspect_logs(tmp_path_factory: pytest.TempPathFactory) -> InspectLogs:
    root = tmp_path_factory.mktemp("inspect-logs")
    return InspectLogs(
        eval_logs=fx.write_toolbox_logs(root / "eval", "eval"),
        json_logs=fx.write_toolbox_logs(root / "json", "json"),
        agentdojo=fx.agentdojo_shaped_log(root / "published" / "agentdojo_banking.json"),
    )

"""An endpoint that reports invalid token usage: the error turn records why (``turns.error_text``) even
when the transcript is not recorded (``--no-messages``), and no secret the endpoint echoes into a usage
field reaches that text or any other written byte (docs/formats.md, docs/backends.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from servers.fake_provider import FakeProvider
from servers.sdk_env import FAKE_KEY, isolate

from agenthop.harness.backends.calling import bad_usage
from agenthop.harness.benchmarks.agenthop.generator import make_benchmark
from agenthop.harness.benchmarks.agenthop.loader import load_release
from agenthop.harness.panel import ModelSpec
from agenthop.harness.runner import COMPLETE, RunOptions, run_model

KEY_ENV = "AGENTHOP_TEST_KEY"


@pytest.fixture()
def release(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Any:
    isolate(monkeypatch)
    monkeypatch.setenv(KEY_ENV, FAKE_KEY)
    root = tmp_path_factory.mktemp("usage") / "bench"
    make_benchmark(root, 3, seed=2)
    return load_release(root)


class ReportsUsage(FakeProvider):
    """Reports ``usage.prompt_tokens`` as the value given (a number, or a string such as the key)."""

    def __init__(self, prompt_tokens: Any, **kw: Any) -> None:
        super().__init__(**kw)
        self.reported = prompt_tokens

    def _openai_body(self, text: str, calls: list[tuple[str, str, str]]) -> dict[str, Any]:
        out = super()._openai_body(text, calls)
        out["usage"]["prompt_tokens"] = self.reported
        return out


def _rows(run_dir: Path, table: str) -> list[dict[str, Any]]:
    return [r for p in sorted(run_dir.glob(f"{table}-*.parquet")) for r in pq.read_table(p).to_pylist()]


@pytest.mark.parametrize(("prompt_tokens", "expected"), [
    (-90, "usage field usage.prompt_tokens is -90: not a token count (a whole number from 0 to 2^40)"),
    (FAKE_KEY, "usage field usage.prompt_tokens is a str: not a token count (a whole number from 0 to 2^40)"),
])
def test_error_turns_record_the_usage_violation_without_messages(release: Any, tmp_path: Path,
                                                                 prompt_tokens: Any, expected: str) -> None:
    opts = RunOptions(workers=1, limit=1, progress=False, record_messages=False,
                      loop_overrides={"max_attempts": 1, "max_consecutive_errors": 2, "error_sleep_cap_s": 0.0,
                                      "transient_backoff_cap_s": 0.0})
    with ReportsUsage(prompt_tokens, think_turns=0) as srv:
        spec = ModelSpec(name="liar", backend="openai", base_url=srv.base_url, api_key_env=KEY_ENV)
        res = run_model(spec, release, tmp_path / "runs", opts)
        assert any(FAKE_KEY in str(h) for h in srv.headers), srv.headers[:1]  # the key was sent
    assert res.status == COMPLETE
    run_dir = Path(res.run_dir)
    assert not list(run_dir.glob("messages-*.parquet"))  # no transcript
    turns = _rows(run_dir, "turns")
    assert [t["role"] for t in turns] == ["error", "error"]
    assert [t["error_text"] for t in turns] == [expected] * 2
    assert all(t["content_chars"] == len(expected) for t in turns)
    for f in run_dir.rglob("*"):
        if f.is_file():
            assert FAKE_KEY.encode() not in f.read_bytes(), f


def test_assistant_turns_have_no_error_text(release: Any, tmp_path: Path) -> None:
    with FakeProvider(think_turns=1) as srv:
        spec = ModelSpec(name="honest", backend="openai", base_url=srv.base_url, api_key_env=KEY_ENV)
        res = run_model(spec, release, tmp_path / "runs", RunOptions(workers=1, limit=1, progress=False))
    turns = _rows(Path(res.run_dir), "turns")
    assert turns and all(t["role"] == "assistant" and t["error_text"] is None for t in turns)


def test_a_usage_value_that_is_not_a_number_is_named_by_its_type_only() -> None:
    assert str(bad_usage("usage.x", "sk-live-abc")) == "usage field usage.x is a str: not a token count " \
                                                      "(a whole number from 0 to 2^40)"
    assert "sk-live" not in str(bad_usage("usage.x", {"k": "sk-live-abc"}))
    assert str(bad_usage("usage.x", 3.5)).startswith("usage field usage.x is 3.5:")

"""Usage numbers from a hostile endpoint: every count is checked per response, through the official SDKs
against loopback servers. A count that is not a whole number from 0 to 2^40 is an error turn of its
sample naming the field: never a traceback, never a negative or overflowing count written or summed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from servers import tiny_sample
from servers.anthropic_server import AnthropicServer, message, tool_use
from servers.fake_provider import FakeProvider
from servers.loop_driver import Waits, run, run_loop
from servers.openai_server import OpenAIServer, completion, tool_call
from servers.scripted_http import Reply
from servers.sdk_env import FAKE_KEY, isolate

from agenthop.harness.backends.anthropic import AnthropicBackend
from agenthop.harness.backends.base import BackendError, TransientBackendError
from agenthop.harness.backends.calling import MAX_TOKEN_COUNT, token_count
from agenthop.harness.backends.openai import OpenAIBackend

HOSTILE = [2**63 + 5, 1e308, -90, 3.5, float("inf"), "12", True, MAX_TOKEN_COUNT]


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    isolate(monkeypatch)


@pytest.mark.parametrize("value", HOSTILE)
def test_token_count_refuses_what_is_not_a_count(value: Any) -> None:
    with pytest.raises(BackendError, match=r"usage field usage\.x is .*not a token count"):
        token_count(value, "usage.x")


def test_token_count_accepts_counts() -> None:
    assert [token_count(v, "f") for v in (None, 0, 7, 12.0, MAX_TOKEN_COUNT - 1)] == [0, 0, 7, 12, MAX_TOKEN_COUNT - 1]


def openai_reply(**usage: Any) -> Reply:
    reply = completion(tool_calls=[tool_call("c1", "submit_answer", {"answer": "C", "reasoning": "r"})],
                       prompt_tokens=100, completion_tokens=10)
    reply.body["usage"].update(usage)
    return reply


def anthropic_reply(**usage: Any) -> Reply:
    reply = message([tool_use("t1", "submit_answer", {"answer": "C", "reasoning": "r"})],
                    input_tokens=100, output_tokens=10)
    reply.body["usage"].update(usage)
    return reply


CASES = [
    *[("openai", "prompt_tokens", v) for v in (2**63 + 5, 1e308, -90, 3.5)],
    ("openai", "completion_tokens", -1),
    ("openai", "prompt_tokens_details", {"cached_tokens": 2**63 + 5}),
    *[("anthropic", "input_tokens", v) for v in (2**63 + 5, 1e308, -90, 3.5)],
    ("anthropic", "output_tokens", -1),
    ("anthropic", "cache_read_input_tokens", 1e308),
    ("anthropic", "cache_creation_input_tokens", -90),
]


def responses_reply(**usage: Any) -> Reply:
    from servers import responses_server as rs

    reply = rs.response([rs.function_call("fc1", "c1", "submit_answer", {"answer": "C", "reasoning": "r"})],
                        input_tokens=100, output_tokens=10)
    reply.body["usage"].update(usage)
    return reply


def gemini_reply(**usage: Any) -> Reply:
    from servers import gemini_server as gs

    reply = gs.response([gs.function_call("submit_answer", {"answer": "C", "reasoning": "r"})], prompt=100,
                        candidates=10)
    reply.body["usageMetadata"].update(usage)
    return reply


def backend_for(kind: str, base_url: str) -> Any:
    if kind == "openai":
        return OpenAIBackend("test-model", base_url=base_url, api_key=FAKE_KEY)
    if kind == "responses":
        from agenthop.harness.backends.responses import ResponsesBackend

        return ResponsesBackend("gpt-test", base_url=base_url, api_key=FAKE_KEY)
    if kind == "google":
        from agenthop.harness.backends.google import GoogleBackend

        return GoogleBackend("gemini-2.5-flash", base_url=base_url, api_key=FAKE_KEY)
    return AnthropicBackend("claude-test", base_url=base_url, api_key=FAKE_KEY)


def serve(kind: str, replies: list[Reply]) -> Any:
    from servers.gemini_server import GeminiServer
    from servers.responses_server import ResponsesServer

    server = {"openai": OpenAIServer, "anthropic": AnthropicServer, "responses": ResponsesServer,
              "google": GeminiServer}[kind]
    return server(replies)


def reply_with(kind: str, field: str, value: Any) -> Reply:
    build = {"openai": openai_reply, "anthropic": anthropic_reply, "responses": responses_reply,
             "google": gemini_reply}[kind]
    return build(**{field: value})


#: the other two backends: the SDK of Gemini validates usage as integers itself, so only integer lies
OTHER_CASES = [
    ("responses", "input_tokens", 2**63 + 5), ("responses", "input_tokens", 1e308),
    ("responses", "output_tokens", -90), ("responses", "output_tokens", 3.5),
    ("google", "promptTokenCount", 2**63 + 5), ("google", "candidatesTokenCount", -90),
    ("google", "thoughtsTokenCount", -1),
]


@pytest.mark.parametrize(("kind", "field", "value"), CASES + OTHER_CASES)
def test_a_hostile_count_is_an_error_naming_the_field(kind: str, field: str, value: Any) -> None:
    async def one_call(base_url: str) -> BackendError:
        backend = backend_for(kind, base_url)
        try:
            with pytest.raises(BackendError) as info:
                await backend.start(tiny_sample.context()).complete()
        finally:
            await backend.aclose()
        return info.value

    with serve(kind, [reply_with(kind, field, value)]) as srv:
        err = run(one_call(srv.base_url))
    assert not isinstance(err, TransientBackendError)
    named = "".join("_" + c.lower() if c.isupper() else c for c in field)  # Gemini's SDK field names
    assert (field in str(err) or named in str(err)) and "not a token count" in str(err), str(err)


@pytest.mark.parametrize(("kind", "field", "value"), CASES)
def test_the_sample_records_an_error_turn_and_goes_on(kind: str, field: str, value: Any) -> None:
    good = openai_reply() if kind == "openai" else anthropic_reply()
    with serve(kind, [reply_with(kind, field, value), good]) as srv:
        results = run_loop(backend_for(kind, srv.base_url), Waits())
    (r,) = results
    t = r.trajectory
    assert [x["role"] for x in r.turns] == ["error", "assistant"]
    assert (t["terminated_by"], t["is_correct"], t["api_error_count"]) == ("answer", True, 1)
    assert (t["total_prompt_tokens"], t["total_completion_tokens"], t["total_tokens"]) == (100, 10, 110)
    counts = [v for row in r.turns for k, v in row.items() if k.endswith("tokens")]
    assert all(isinstance(v, int) and 0 <= v < MAX_TOKEN_COUNT for v in counts)


@pytest.mark.parametrize("prompt_tokens", [2**63 + 5, 1e308, -90])
def test_a_run_against_an_endpoint_that_always_lies_ends_its_samples_not_the_run(
        tmp_path: Path, prompt_tokens: Any) -> None:
    from agenthop.harness.benchmarks.agenthop.generator import make_benchmark
    from agenthop.harness.benchmarks.agenthop.loader import load_release
    from agenthop.harness.panel import ModelSpec
    from agenthop.harness.runner import COMPLETE, RunOptions, run_model

    make_benchmark(tmp_path / "bench", 3, seed=1)
    release = load_release(tmp_path / "bench")
    opts = RunOptions(workers=2, limit=2, loop_overrides={"max_attempts": 1, "max_consecutive_errors": 2,
                                                          "error_sleep_cap_s": 0.0})
    with FakeProvider(think_turns=0, prompt_tokens=prompt_tokens) as srv:  # type: ignore[arg-type]
        spec = ModelSpec(name="liar", backend="openai", base_url=srv.base_url)
        res = run_model(spec, release, tmp_path / "runs", opts)
        again = run_model(spec, release, tmp_path / "runs", opts)  # a rerun does not fall over either
    assert res.status == COMPLETE and res.n_done == 2 and res.tokens == 0
    assert again.status == COMPLETE
    rows = [r for p in sorted(Path(res.run_dir).glob("trajectories-*.parquet")) for r in pq.read_table(p).to_pylist()]
    assert rows and all(r["terminated_by"] == "error" and r["total_tokens"] == 0 for r in rows)
    turns = [r for p in sorted(Path(res.run_dir).glob("turns-*.parquet")) for r in pq.read_table(p).to_pylist()]
    assert turns and all(r["role"] == "error" and r["prompt_tokens"] == 0 for r in turns)

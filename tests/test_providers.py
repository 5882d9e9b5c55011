"""Provider detection by model id, the reference's sampling presets, the dry run, the paper's real
19-model panel and the price seed's coverage of it."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from click.testing import CliRunner
from servers.sdk_env import isolate

from agenthop.harness import runner
from agenthop.harness.cli import main as cli_main
from agenthop.harness.panel import load_panel
from agenthop.harness.providers import detect_provider, public_endpoint, sampling_preset

REPO = Path(__file__).resolve().parents[1]
REAL_PANEL = REPO / "panels" / "paper19.real.yaml"
KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "DEEPSEEK_API_KEY", "TOGETHER_API_KEY")


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    isolate(monkeypatch)
    for var in KEYS + ("DEEPSEEK_API_KEY", "TOGETHER_API_KEY", "XAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)

    def no_calls(*args: object, **kwargs: object) -> None:
        raise AssertionError("a dry run must not start anything")

    monkeypatch.setattr(runner, "run_panel", no_calls)


@pytest.mark.parametrize("model,backend,key,url", [
    ("gpt-5.3-codex", "responses", "OPENAI_API_KEY", None),
    ("codex-mini-latest", "responses", "OPENAI_API_KEY", None),
    ("gpt-5.4", "responses", "OPENAI_API_KEY", None),
    ("gpt-5-mini", "responses", "OPENAI_API_KEY", None),
    ("gpt-5", "openai", "OPENAI_API_KEY", None),  # bare gpt-5 falls through to gpt-, as in the reference
    ("gpt-4.1-mini", "openai", "OPENAI_API_KEY", None),
    ("o3-mini", "openai", "OPENAI_API_KEY", None),
    ("deepseek-reasoner", "openai", "DEEPSEEK_API_KEY", "https://api.deepseek.com/v1"),
    ("Claude-Sonnet-4-6", "anthropic", "ANTHROPIC_API_KEY", None),
    ("gemini-3-pro-preview", "google", "GOOGLE_API_KEY", None),
    ("gemini-2.5-flash", "google", "GOOGLE_API_KEY", None),
    ("gemini-2.0-flash", "openai", "GOOGLE_API_KEY", "https://generativelanguage.googleapis.com/v1beta/openai/"),
    ("MiniMaxAI/MiniMax-M2.7", "openai", "TOGETHER_API_KEY", "https://api.together.xyz/v1"),
    ("moonshotai/Kimi-K2.5", "openai", "TOGETHER_API_KEY", "https://api.together.xyz/v1"),
    ("grok-4", "openai", "XAI_API_KEY", "https://api.x.ai/v1"),
])
def test_detection_table(model: str, backend: str, key: str, url: str | None) -> None:
    p = detect_provider(model)
    assert p is not None and (p.backend, p.key_env, p.base_url) == (backend, key, url)


def test_unknown_models_are_not_detected() -> None:
    assert detect_provider("Qwen/Qwen3-8B") is None and detect_provider("early-committer") is None


@pytest.mark.parametrize("model,prefix,sampling", [
    ("gemini-3-pro-preview", "gemini-3-pro-preview", {"top_k": 64, "reasoning_effort": "medium"}),
    ("gemini-2.5-pro", "gemini-2.5-pro", {"top_k": 64}),
    ("claude-opus-4-5-20251101", "claude-opus-4-5", {"reasoning_effort": "8192"}),
    ("claude-haiku-4-5", "claude-haiku-4-5", {}),
    ("gpt-5.1", "gpt-5", {"reasoning_effort": "medium"}),
    ("deepseek-chat", "deepseek-chat", {"max_tokens": 8192}),
    ("Qwen/Qwen3.5-397B-A17B", "qwen/qwen3.5-", {"top_k": 20}),
    ("Qwen/Qwen3-8B", "qwen/qwen3-", {"temperature": 0.7, "top_p": 0.8, "top_k": 20}),
    ("moonshotai/Kimi-K2.5", "moonshotai/kimi-k2.5", {"temperature": 0.6}),
])
def test_presets_by_longest_prefix(model: str, prefix: str, sampling: dict[str, object]) -> None:
    assert sampling_preset(model) == (prefix, sampling)
    assert sampling_preset("mistral-large") is None


def _run(args: list[str], env: dict[str, str] | None = None) -> tuple[int, str, str]:
    res = CliRunner().invoke(cli_main, ["run", *args], env=env or {})
    return res.exit_code, res.stdout, res.stderr


def test_cli_detects_backend_key_and_preset_and_says_so() -> None:
    code, out, err = _run(["--model", "gemini-3-pro-preview", "--dry-run"], {"GEMINI_API_KEY": "gm-1"})
    assert code == 0, err
    assert ("gemini-3-pro-preview: backend google (Google Gemini API, detected from the model id), endpoint "
            "generativelanguage.googleapis.com, key from GEMINI_API_KEY") in err
    assert "the reference's sampling preset 'gemini-3-pro-preview': top_k=64, reasoning_effort=medium" in err
    assert out.splitlines()[0] == (
        "gemini-3-pro-preview: backend google, model gemini-3-pro-preview, endpoint "
        "generativelanguage.googleapis.com, key GEMINI_API_KEY (set), sampling top_k=64, reasoning_effort=medium")
    assert "gm-1" not in out + err

    code, out, err = _run(["--model", "deepseek-chat", "--dry-run"])
    assert code == 2
    assert "backend openai (DeepSeek, detected from the model id), endpoint api.deepseek.com, key from " \
           "DEEPSEEK_API_KEY" in err
    assert "missing key: deepseek-chat: DEEPSEEK_API_KEY is not set" in err


def test_explicit_flags_win_over_detection() -> None:
    # an explicit backend: nothing is detected; the model's preset still applies (no sampling flags exist)
    code, out, err = _run(["--model", "gemini-3-pro-preview", "--backend", "openai", "--base-url",
                           "http://127.0.0.1:9/v1", "--dry-run"], {"GOOGLE_API_KEY": "g"})
    assert code == 0 and "detected" not in err and "sampling preset 'gemini-3-pro-preview'" in err
    assert out.splitlines()[0] == ("gemini-3-pro-preview: backend openai, model gemini-3-pro-preview, endpoint "
                                   "127.0.0.1:9, key none (placeholder key for the explicit base URL), sampling "
                                   "top_k=64, reasoning_effort=medium")
    code, out, err = _run(["--model", "my-local-model", "--backend", "openai", "--base-url", "http://127.0.0.1:9/v1",
                           "--dry-run"])
    assert code == 0 and err == "" and out.splitlines()[0].endswith("sampling provider defaults")
    # an explicit endpoint replaces the detected one, and the detected key variable stays home
    code, out, err = _run(["--model", "deepseek-chat", "--base-url", "http://127.0.0.1:9/v1", "--dry-run"],
                          {"DEEPSEEK_API_KEY": "d"})
    assert code == 0
    assert "endpoint 127.0.0.1:9, key none (placeholder key for the explicit base URL)" in out
    # an explicit key variable replaces the detected one
    code, out, err = _run(["--model", "claude-haiku-4-5", "--api-key-env", "MY_KEY", "--dry-run"], {"MY_KEY": "m"})
    assert code == 0 and "key MY_KEY (set)" in out


def test_a_real_run_with_a_missing_key_fails_before_starting(tmp_path: Path) -> None:
    code, out, err = _run(["--model", "gpt-5.4", "--data", str(tmp_path / "rel"), "--out", str(tmp_path / "out")])
    assert code == 2
    assert "missing key: gpt-5.4: OPENAI_API_KEY is not set" in err and "nothing was run" in err
    assert not (tmp_path / "out").exists()


def test_paper_panel_dry_run_lists_19_models_and_each_missing_key() -> None:
    panel = load_panel(REAL_PANEL)
    assert len(panel.models) == 19
    assert [sum(m.tier == t for m in panel.models) for t in ("closed_frontier", "open_frontier",
                                                              "compute_efficient")] == [7, 7, 5]
    assert {m.backend for m in panel.models} == {"google", "responses", "anthropic", "openai"}
    assert "api_key:" not in REAL_PANEL.read_text() and "sk-" not in REAL_PANEL.read_text()

    code, out, err = _run(["--panel", str(REAL_PANEL), "--dry-run"])
    assert code == 2
    lines = out.splitlines()
    assert len(lines) == 19 and all(": backend " in line for line in lines)
    missing = [line for line in err.splitlines() if line.startswith("missing key: ")]
    remote = [m for m in panel.models if m.base_url is None or public_endpoint(m.base_url)]
    assert len(missing) == len(remote) == 15  # the 4 self-hosted models need no key
    assert "missing key: gemini-3-pro-preview: GOOGLE_API_KEY (or GEMINI_API_KEY) is not set" in err
    assert "error: 15 of 19 models have no API key set (see above); nothing was called" in err
    assert "kimi-k2.5: backend openai, model moonshotai/Kimi-K2.5, endpoint api.together.xyz, key " \
           "TOGETHER_API_KEY (NOT SET), sampling temperature=0.6" in lines

    code, out, err = _run(["--panel", str(REAL_PANEL), "--dry-run"], {k: "set" for k in KEYS})
    assert code == 0 and err == ""
    assert out.splitlines()[-1] == "dry run: 19 models, every key needed is set; nothing was called"


def test_price_seed_covers_every_priced_model_of_the_paper_panel() -> None:
    with open(REPO / "dbt_support" / "seeds" / "model_prices.csv", newline="", encoding="utf-8") as f:
        prices = sorted(csv.DictReader(f), key=lambda r: int(r["price_order"]))
    assert list(prices[0]) == ["price_order", "prefix", "provider", "input_per_m", "output_per_m",
                               "cache_read_mult", "cache_write_mult", "note"]

    def price(model_id: str) -> str | None:  # as models_sql/marts/model_cost.sql: first prefix, case-sensitive
        return next((r["prefix"] for r in prices if model_id.startswith(r["prefix"])), None)

    for m in load_panel(REAL_PANEL).models:
        hosted = m.base_url is None or public_endpoint(m.base_url)
        assert (price(m.provider_model) is not None) is hosted, m.name
    assert price("gemini-3-pro-preview") == "gemini-3-pro-preview" and price("gpt-5.3-codex") == "gpt-5.3-codex"

"""The agent loop (the reference harness) and the sample-level retry (docs/harness.md#deliberate-differences).

The loop is the same for every benchmark; what is a benchmark's own (its prompts and tools, what a
call costs and does, the answer tool and its scoring, the fixed texts) comes from the attempt's
:class:`~agenthop.harness.episode.Episode`, built by the benchmark's registry entry.

``run_attempt`` plays one attempt of one sample against a backend conversation:

* one model call per turn, at most ``caps.max_turns`` turns;
* a ``TransientBackendError`` is retried on the same turn without using a turn, after the delay the
  server asked for (capped) or exponential backoff with full jitter from 1 s; more than
  ``max_transient_retries`` of them in one turn (``max_rate_limit_retries`` when they are rate limits)
  end the attempt as ``error``;
* any other ``BackendError``, and any other exception raised while calling the backend or decoding
  its answer (an SDK bug, an undecodable body), records an ``error`` turn (the turn is used up),
  sleeps min(2^n, 15) s, and ``max_consecutive_errors`` in a row end the attempt as ``error``;
* a response the trajectory store cannot hold (harness/replies.py: text, a call's name or arguments past
  the 5 MiB text cap ingest enforces, a call with an empty name) records an ``error`` turn with its
  tokens, is not added to the conversation and is asked again at once; it counts toward
  ``max_consecutive_errors`` like a backend error. What goes back into the conversation (tool results,
  a kept reply's text, call names and string arguments) is cut to ``MAX_RESENT_CHARS`` with a note;
* after every successful call the cumulative prompt + completion + cache-write tokens are compared
  with ``caps.max_total_tokens`` (strict ``>``); crossing it ends the attempt as ``token_limit`` and that
  response's calls are recorded as ``not_executed``;
* a response with neither text nor calls ends the attempt as ``error``; text only gets the nudge, or,
  when the episode's ``text_is_answer`` is true (a benchmark whose answer is the final text), is the
  answer and ends the attempt as ``answer``; such an attempt ended by a cap or an error is scored on
  the last text the model wrote (``episode.answer_from_text(text, terminated_by)``);
* calls run in emitted order, each budget-checked (two consecutive rejections end the attempt as
  ``budget``; any executed call, even a free one, resets the count; the answer tool is never
  rejected for budget); calls after the episode's answer tool in the same turn still run, the last
  answer wins, and the attempt ends as ``answer`` after the turn;
* every result of a turn carries the same footer; when no budget is left after a turn, the budget
  advisory follows as a user message (every such turn); running out of turns gives ``max_turns``.

``run_episodes`` (``run_sample`` for one sample of ``cfg.benchmark``) retries a sample whose attempt
ended with ``error`` (at most ``max_attempts``), waiting ``sample_retry_waits`` through ``cfg.sleep``.
``max_sample_seconds`` caps a sample's wall-clock time over all its attempts: past it the attempt ends
as ``time_limit`` and no further attempt starts. Each attempt's rows carry only that attempt's tokens.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from .backends.base import (
    Backend,
    BackendError,
    Conversation,
    ModelResponse,
    SampleContext,
    ToolCall,
    TransientBackendError,
)
from . import benchmarks
from .backends.retry import backoff_delay
from .episode import Answer, Episode
from .provider_calls import provider_call_rows
from .replies import args_json as _args_json
from .replies import reply_problem, resent_reply, resent_text
from .errors import AgentHopError
from agenthop.schemas.trajectory import DEFAULT_BENCHMARK

# call statuses the loop itself assigns (the shared vocabulary, docs/formats.md#trajectory-store)
NOT_EXECUTED = "not_executed"
REJECTED_BUDGET = "rejected_budget"
REJECTED_DISABLED = "rejected_disabled"

Sleep = Callable[[float], Awaitable[Any]]


async def no_sleep(seconds: float) -> None:
    """A ``sleep`` that returns at once (tests and the simulated backend)."""
    return None


@dataclass(frozen=True, slots=True)
class Caps:
    budget: int = 30
    max_turns: int = 20
    max_total_tokens: int = 200_000

    def __post_init__(self) -> None:
        for name, low in (("budget", 0), ("max_turns", 1), ("max_total_tokens", 1)):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                raise AgentHopError(f"caps: {name} must be an integer >= {low}, got {value!r}")


@dataclass(slots=True)
class LoopConfig:
    caps: Caps = field(default_factory=Caps)
    condition: str = "full"
    #: transient retries per turn; one more transient error abandons the attempt (reference: 10)
    max_transient_retries: int = 10
    #: rate-limit (429) retries per turn: they come with the server's delay and are expected under load
    max_rate_limit_retries: int = 60
    #: backoff without a server hint: full jitter over [0, min(cap, base * 2^(k-1))]
    transient_backoff_base_s: float = 1.0
    transient_backoff_cap_s: float = 60.0
    #: consecutive non-transient errors that end the attempt (reference: 5)
    max_consecutive_errors: int = 5
    error_sleep_cap_s: float = 15.0
    #: attempts per sample when attempts end with ``error`` (reference: 3), and the waits between them
    max_attempts: int = 3
    sample_retry_waits: tuple[float, ...] = (30.0, 60.0)
    #: injectable so tests and the simulator wait zero seconds
    sleep: Sleep = asyncio.sleep
    #: keep the conversation transcript (``messages`` table)
    record_messages: bool = False
    #: wall-clock seconds a sample may take over all its attempts (0: no cap); past it the attempt
    #: ends as ``time_limit`` (a model call in progress is abandoned, a wait that would pass it is not begun)
    max_sample_seconds: float = 0.0
    #: the benchmark whose samples are played (its registry entry builds each attempt's episode)
    benchmark: str = DEFAULT_BENCHMARK
    #: the benchmark's own run options, handed to its ``episode`` hook (none: the hook is called without)
    options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        known = benchmarks.get(self.benchmark).conditions
        if self.condition not in known:
            raise AgentHopError(f"unknown condition {self.condition!r}; expected one of {', '.join(known)}")
        if self.max_attempts < 1:
            raise AgentHopError(f"max_attempts must be >= 1, got {self.max_attempts}")

    def transient_wait(self, k: int, suggested: float | None = None,
                       rng: random.Random | None = None) -> float:
        """Wait before the k-th (1-based) transient retry: the server's ``suggested`` delay (capped), else
        a uniform draw from [0, min(cap, base * 2^(k-1))] (``rng``: seeded per attempt, deterministic)."""
        return backoff_delay(k, suggested, rng=(rng or random.Random(k)).random,
                             base=self.transient_backoff_base_s, cap=self.transient_backoff_cap_s)

    def error_wait(self, n: int) -> float:
        """Wait after the n-th consecutive non-transient error: 2, 4, 8, 15, ... seconds."""
        return min(2.0 ** min(n, 16), self.error_sleep_cap_s)

    def retry_wait(self, attempt: int) -> float:
        """Wait after failed attempt ``attempt`` (0-based) before the next one."""
        waits = self.sample_retry_waits
        if not waits:
            return 0.0
        return waits[min(attempt, len(waits) - 1)]


class _OutOfTime(Exception):
    """The sample's wall-clock cap passed during a model call."""


async def _before(deadline: float, call: Awaitable[ModelResponse]) -> ModelResponse:
    """``await call``, abandoned (``_OutOfTime``) when ``deadline`` (monotonic) passes first."""
    try:
        return await asyncio.wait_for(call, max(0.0, deadline - time.monotonic()))
    except TimeoutError:
        raise _OutOfTime from None


@dataclass(slots=True)
class AttemptResult:
    """Rows of one attempt; keys are the trajectory-table columns minus ``run_id``."""

    trajectory: dict[str, Any]
    turns: list[dict[str, Any]]
    tool_calls: list[dict[str, Any]]
    messages: list[dict[str, Any]] = field(default_factory=list)

    @property
    def terminated_by(self) -> str:
        return self.trajectory["terminated_by"]

    @property
    def is_final(self) -> bool:
        return self.trajectory["is_final"]


async def run_attempt(
    episode: Episode,
    conv: Conversation,
    cfg: LoopConfig,
    attempt: int,
    deadline: float | None = None,
) -> AttemptResult:
    """Play one attempt of ``episode`` (see the module docstring for the rules); ``deadline`` (a
    ``time.monotonic()`` value) ends it as ``time_limit``."""
    caps = cfg.caps
    budget_total = caps.budget
    max_total_tokens = caps.max_total_tokens
    ctx = episode.context
    sid = ctx.item.id
    disabled = episode.disabled_tools
    execute = episode.execute
    emitted = episode.emitted_columns
    cost_of = episode.cost
    answer_tool = episode.answer_tool
    error_statuses = episode.error_statuses
    text_is_answer = bool(getattr(episode, "text_is_answer", False))
    last_text: str | None = None  # the last text the model wrote (the answer of a text-answer episode)
    sleep = cfg.sleep
    nudge_text = episode.nudge()
    footer = episode.footer
    clock = time.monotonic
    t0 = clock()

    turns: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    remaining = budget_total
    tot_p = tot_c = tot_cr = tot_cw = 0
    cum = 0
    rejections = 0
    consecutive_errors = 0
    api_errors = 0
    transient_total = 0
    tool_errors = 0
    waited = 0.0
    repaired = 0
    jitter = random.Random(f"{ctx.seed}/{attempt}")
    seq = 0
    answer: Answer | None = None  # the last executed answer call's
    terminated: str | None = None

    def error_turn(turn_idx: int, content: str, tokens: tuple[int, int, int, int] = (0, 0, 0, 0)) -> None:
        turns.append(
            {
                "sample_id": sid,
                "attempt": attempt,
                "turn": turn_idx,
                "role": "error",
                "n_tool_calls": 0,
                "prompt_tokens": tokens[0],
                "completion_tokens": tokens[1],
                "cache_read_tokens": tokens[2],
                "cache_creation_tokens": tokens[3],
                "cumulative_tokens": cum,
                "budget_before": remaining,
                "budget_after": remaining,
                "content_chars": len(content),
                "t_offset_s": clock() - t0,
                "error_text": content,
            }
        )

    def out_of_time(wait: float = 0.0) -> bool:
        return deadline is not None and clock() + wait >= deadline

    for turn_idx in range(caps.max_turns):
        if out_of_time():
            terminated = "time_limit"
            break
        # 1. one model call (transient errors retried on the same turn)
        resp: ModelResponse | None = None
        transient = 0
        while True:
            try:
                resp = await (conv.complete() if deadline is None else _before(deadline, conv.complete()))
                break
            except _OutOfTime:
                terminated = "time_limit"
                break
            except TransientBackendError as exc:
                transient += 1
                transient_total += 1
                limit = cfg.max_rate_limit_retries if exc.rate_limited else cfg.max_transient_retries
                if transient > limit:
                    error_turn(turn_idx, f"Abandoned after {transient} transient retries: {exc}")
                    terminated = "error"
                    break
                wait = cfg.transient_wait(transient, exc.retry_after, jitter)
                if out_of_time(wait):
                    terminated = "time_limit"
                    break
                waited += wait
                await sleep(wait)
            except Exception as exc:  # BackendError, or anything else the backend raised: one error turn
                consecutive_errors += 1
                api_errors += 1
                if isinstance(exc, BackendError):
                    error_turn(turn_idx, str(exc) or type(exc).__name__)
                else:  # the text of an unexpected exception may name the endpoint: only its type is kept
                    error_turn(turn_idx, f"unexpected {type(exc).__name__} from the backend")
                if consecutive_errors >= cfg.max_consecutive_errors:
                    terminated = "error"
                elif turn_idx + 1 < caps.max_turns:
                    wait = cfg.error_wait(consecutive_errors)
                    if out_of_time(wait):
                        terminated = "time_limit"
                        break
                    waited += wait
                    await sleep(wait)
                break
        if terminated is not None:
            break
        if resp is None:
            continue  # a non-transient error used up this turn
        repaired += resp.repaired_chars

        # 2. token accounting: strict '>' right after the call
        p = resp.prompt_tokens
        c = resp.completion_tokens
        cr = resp.cache_read_tokens
        cw = resp.cache_creation_tokens
        tot_p += p
        tot_c += c
        tot_cr += cr
        tot_cw += cw
        cum = tot_p + tot_c + tot_cw
        t_off = clock() - t0
        problem = reply_problem(resp)
        if problem is not None:  # the store cannot hold it: an error turn with its tokens, the reply dropped
            consecutive_errors += 1
            api_errors += 1
            error_turn(turn_idx, problem, (p, c, cr, cw))
            if cum > max_total_tokens:
                terminated = "token_limit"
                break
            if consecutive_errors >= cfg.max_consecutive_errors:
                terminated = "error"
                break
            continue
        consecutive_errors = 0
        text = resp.text or ""
        if text:
            last_text = text
        tcs = resp.tool_calls or []
        # searches the provider ran itself (native search): recorded first (harness/provider_calls.py)
        provided = provider_call_rows(resp.provider_calls, _call_row, sid, attempt, turn_idx, seq, emitted, remaining)
        calls += provided
        seq += len(provided)
        tool_errors += sum(r["status"] in error_statuses for r in provided)
        n_calls = len(tcs) + len(provided)
        budget_before = remaining

        if cum > max_total_tokens:
            for ci, tc in enumerate(tcs, len(provided)):
                calls.append(_call_row(sid, attempt, turn_idx, ci, seq, tc.name, tc.args, emitted(tc.name, tc.args),
                                       0, NOT_EXECUTED, 0, remaining))
                seq += 1
            turns.append(
                _turn_row(sid, attempt, turn_idx, n_calls, p, c, cr, cw, cum, budget_before,
                          remaining, len(text), t_off)
            )
            conv.add_assistant(resp)
            terminated = "token_limit"
            break

        if not tcs:
            turns.append(
                _turn_row(sid, attempt, turn_idx, n_calls, p, c, cr, cw, cum, budget_before, remaining,
                          len(text), t_off)
            )
            if not text:
                terminated = "error"  # empty response: neither text nor calls
                break
            if text_is_answer:  # a reply without a call is the answer
                conv.add_assistant(resp)
                answer = episode.answer_from_text(text, "answer")
                terminated = "answer"
                break
            conv.add_assistant(resent_reply(resp))
            conv.add_user(nudge_text + footer(turn_idx + 1, cum, budget_total - remaining))
            continue

        # 3. run the calls in emitted order
        outputs: list[str] = []
        for ci, tc in enumerate(tcs, len(provided)):
            name = tc.name
            args = tc.args
            error_type = None
            if name in disabled:
                out_text = episode.rejected_disabled_text(name)
                status = REJECTED_DISABLED
                cost = 0
                columns = emitted(name, args)
            else:
                tool_cost = cost_of(name)
                if name != answer_tool and remaining < tool_cost:
                    out_text = episode.rejected_budget_text(remaining, name, tool_cost)
                    status = REJECTED_BUDGET
                    cost = 0
                    rejections += 1
                    columns = emitted(name, args)
                else:
                    out = execute(name, args)
                    out_text = out.text
                    status = out.status
                    cost = out.cost
                    remaining -= cost
                    rejections = 0
                    if status in error_statuses:
                        tool_errors += 1
                    columns = out.columns
                    error_type = out.error_type
                    if out.answer is not None:
                        answer = out.answer
            outputs.append(out_text)
            calls.append(_call_row(sid, attempt, turn_idx, ci, seq, name, args, columns, cost, status,
                                   len(out_text), remaining, error_type))
            seq += 1

        turns.append(
            _turn_row(sid, attempt, turn_idx, n_calls, p, c, cr, cw, cum, budget_before, remaining,
                      len(text), t_off)
        )
        ft = footer(turn_idx + 1, cum, budget_total - remaining)
        sent = resent_reply(resp)  # long texts cut in what is sent back (harness/replies.py)
        conv.add_assistant(sent)
        conv.add_tool_results([(tc, resent_text(o) + ft) for tc, o in zip(sent.tool_calls, outputs)])

        # 4. after the turn
        if answer is not None:
            terminated = "answer"
            break
        if rejections >= 2:
            terminated = "budget"
            break
        if remaining <= 0:
            conv.add_user(episode.budget_advisory)
    else:
        terminated = "max_turns"

    assert terminated is not None
    if answer is not None:
        scored = answer
    elif text_is_answer:  # a cap or an error ended it: its last text, if any, is the answer
        scored = episode.answer_from_text(last_text, terminated)
    else:
        scored = episode.no_answer()
    trajectory = {
        "sample_id": sid,
        "attempt": attempt,
        "is_final": terminated != "error" or attempt + 1 >= cfg.max_attempts,
        **scored.columns,
        "is_correct": scored.is_correct,
        "score": scored.score,
        "terminated_by": terminated,
        "total_turns": len(turns),
        "budget_used": budget_total - remaining,
        "total_prompt_tokens": tot_p,
        "total_completion_tokens": tot_c,
        "cache_read_tokens": tot_cr,
        "cache_creation_tokens": tot_cw,
        "total_tokens": tot_p + tot_c + tot_cw,
        "tool_errors": tool_errors,
        "api_error_count": api_errors,
        "transient_retry_count": transient_total,
        "wall_time_s": clock() - t0,
        "wait_s": waited + float(getattr(conv, "waited_s", 0.0) or 0.0),
        "repaired_chars": repaired,
    }
    messages: list[dict[str, Any]] = []
    if cfg.record_messages:
        for idx, m in enumerate(conv.transcript()):
            content = m.get("content")
            messages.append(
                {
                    "sample_id": sid,
                    "attempt": attempt,
                    "idx": idx,
                    "role": str(m.get("role", "")),
                    "name": m.get("name"),
                    "tool_call_id": m.get("tool_call_id"),
                    "content": content if content is None or isinstance(content, str) else _args_json(content),
                }
            )
    return AttemptResult(trajectory, turns, calls, messages)


def _call_row(
    sid: str,
    attempt: int,
    turn_idx: int,
    call_index: int,
    seq: int,
    tool: str,
    args: dict[str, Any],
    columns: dict[str, Any],
    cost: int,
    status: str,
    output_chars: int,
    budget_after: int,
    error_type: str | None = None,
) -> dict[str, Any]:
    """One ``tool_calls`` row (schemas/trajectory.py TOOL_CALLS minus run_id): the shared columns and
    the benchmark's own (``columns``)."""
    return {
        "sample_id": sid,
        "attempt": attempt,
        "turn": turn_idx,
        "call_index": call_index,
        "seq": seq,
        "tool": tool,
        "args_json": _args_json(args),
        **columns,
        "cost": cost,
        "status": status,
        "output_chars": output_chars,
        "budget_after": budget_after,
        "error_type": error_type,
    }


def _turn_row(
    sid: str,
    attempt: int,
    turn_idx: int,
    n_calls: int,
    p: int,
    c: int,
    cr: int,
    cw: int,
    cum: int,
    budget_before: int,
    budget_after: int,
    content_chars: int,
    t_off: float,
) -> dict[str, Any]:
    return {
        "sample_id": sid,
        "attempt": attempt,
        "turn": turn_idx,
        "role": "assistant",
        "n_tool_calls": n_calls,
        "prompt_tokens": p,
        "completion_tokens": c,
        "cache_read_tokens": cr,
        "cache_creation_tokens": cw,
        "cumulative_tokens": cum,
        "budget_before": budget_before,
        "budget_after": budget_after,
        "content_chars": content_chars,
        "t_offset_s": t_off,
        "error_text": None,
    }


def _episode(cfg: LoopConfig, sample: tuple[Any, ...], seed: int, attempt: int) -> Episode:
    bench = benchmarks.get(cfg.benchmark)
    if bench.episode is None:
        raise AgentHopError(f"benchmark {cfg.benchmark!r} has no agent episode: its runs come from elsewhere")
    extra = {"options": cfg.options} if cfg.options else {}
    return bench.episode(*sample, condition=cfg.condition, caps=cfg.caps, seed=seed, attempt=attempt, **extra)


def build_context(item: Any, graph: Any, papers: Any, labels: Any, cfg: LoopConfig, seed: int,
                  attempt: int = 0) -> SampleContext:
    """The SampleContext of one attempt of a sample of ``cfg.benchmark`` (given as the parts its
    ``episode`` hook takes) under ``cfg``."""
    return _episode(cfg, (item, graph, papers, labels), seed, attempt).context


async def run_episodes(
    make_episode: Callable[[int], Episode],
    backend: Backend,
    cfg: LoopConfig,
    first_attempt: int = 0,
) -> list[AttemptResult]:
    """Run attempts until one does not end with ``error`` (at most ``cfg.max_attempts``).

    ``make_episode(attempt)`` gives each attempt a fresh episode (context and tools) and the backend a
    fresh conversation; failed attempts are returned too (``attempt`` first_attempt, first_attempt + 1,
    ...; a resumed run continues the numbering of the attempts it already holds), the last one has
    ``is_final`` true, and each carries only its own tokens.
    """
    results: list[AttemptResult] = []
    deadline = time.monotonic() + cfg.max_sample_seconds if cfg.max_sample_seconds > 0 else None
    for k in range(cfg.max_attempts):
        attempt = first_attempt + k
        episode = make_episode(attempt)
        conv = backend.start(episode.context)
        result = await run_attempt(episode, conv, cfg, attempt, deadline)
        results.append(result)
        if result.trajectory["terminated_by"] != "error":
            break
        if k + 1 < cfg.max_attempts:
            if deadline is not None and time.monotonic() + cfg.retry_wait(k) >= deadline:
                break  # no time left for another attempt: the failed one is final
            await cfg.sleep(cfg.retry_wait(k))
    last = len(results) - 1
    for i, r in enumerate(results):
        r.trajectory["is_final"] = i == last
    return results


async def run_sample_parts(
    sample: tuple[Any, ...],
    backend: Backend,
    cfg: LoopConfig,
    seed: int,
    first_attempt: int = 0,
) -> list[AttemptResult]:
    """:func:`run_episodes` for one sample of ``cfg.benchmark`` given as the parts its ``episode`` hook
    takes (its registry entry's ``sample_parts``)."""
    return await run_episodes(lambda attempt: _episode(cfg, sample, seed, attempt), backend, cfg, first_attempt)


async def run_sample(*args: Any, seed: int | None = None, first_attempt: int = 0) -> list[AttemptResult]:
    """:func:`run_episodes` for one sample of ``cfg.benchmark``: ``run_sample(*parts, backend, cfg,
    seed)``, the parts being what its ``episode`` hook takes (its registry entry's ``sample_parts``: for
    AgentHop the item, its graph, the paper pool and its labels; ``seed`` may be given by keyword)."""
    at = next((k for k, a in enumerate(args) if isinstance(a, LoopConfig)), None)
    if at is None or at < 1:
        raise TypeError("run_sample(*parts, backend, cfg, seed, first_attempt=0): no LoopConfig given")
    sample, backend, cfg, rest = args[: at - 1], args[at - 1], args[at], list(args[at + 1:])
    if seed is None:
        if not rest:
            raise TypeError("run_sample: seed missing")
        seed = rest.pop(0)
    if rest:
        first_attempt = rest.pop(0)
    return await run_sample_parts(tuple(sample), backend, cfg, seed, first_attempt)


__all__ = [
    "AttemptResult",
    "Caps",
    "LoopConfig",
    "ToolCall",
    "build_context",
    "no_sleep",
    "run_attempt",
    "run_episodes",
    "run_sample",
    "run_sample_parts",
]

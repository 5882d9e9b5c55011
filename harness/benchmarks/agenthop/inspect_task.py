"""AgentHop as an Inspect AI task: ``inspect eval agenthop/agenthop -T data=DIR --model ...`` (docs/inspect.md).

The task runs the project's own agent loop (harness/loop.py) with Inspect's model in place of a
harness backend, so everything AgentHop defines stays as the harness has it: the seven tools with
their texts and costs (harness/benchmarks/agenthop/tools.py), the project's system prompt and first user message (not
react()'s), the status footer, 20 turns, 200,000 tokens, the 30-point budget with
reject-and-continue, the retry of a sample whose attempt ends in an error, and the termination
reason. Inspect sees every model call (its transcript, usage, limits and epochs work as usual); the
tools are offered to the model with the project's schemas and executed by the loop.

Each sample's attempts are recorded in the sample store under ``agenthop`` (the rows the harness
would write for them), and the scorer reads them: ``agenthop-ingest --inspect-log`` loads such a
log as an ``agenthop`` run with every AgentHop mart. Epochs are reruns (replicate = epoch - 1).
"""

from __future__ import annotations

import hashlib
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    Model,
    ModelOutput,
    get_model,
)
from inspect_ai.scorer import Score, Target, accuracy, mean, scorer, stderr
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.tool import ToolCall as InspectToolCall
from inspect_ai.tool import ToolInfo, ToolParams

from agenthop.harness.backends.base import ModelResponse, SampleContext, ToolCall, ToolSpec
from agenthop.harness.benchmarks.agenthop.loader import load_release
from agenthop.harness.benchmarks.agenthop.model import Release
from agenthop.harness.loop import Caps, LoopConfig, run_sample
from agenthop.harness.release_store import load_at
from agenthop.harness.benchmarks.agenthop import prompts

TASK_NAME = "agenthop"
#: the sample-store key of the recorded attempts, and of the run settings in the task metadata
STORE_KEY = "agenthop"
LETTERS = "ABCD"


def _sample_seed(seed: int, replicate: int, sample_id: str) -> int:
    """The harness's per-sample seed (same formula as the runner), so simulated agents match."""
    digest = hashlib.sha256(f"sample/{seed}/{replicate}/{sample_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") & (2**63 - 1)


def tool_info(spec: ToolSpec) -> ToolInfo:
    """A project tool schema as Inspect's ToolInfo (names, texts and argument schemas unchanged)."""
    return ToolInfo(name=spec.name, description=spec.description,
                    parameters=ToolParams.model_validate(spec.parameters))


class InspectConversation:
    """The loop's conversation on top of Inspect's model (harness/backends/base.Conversation).

    Messages accumulate in the task state, so Inspect's log holds the transcript the model saw.
    """

    def __init__(self, model: Model, state: TaskState, ctx: SampleContext) -> None:
        self.model = model
        self.state = state
        self.tools = [tool_info(t) for t in ctx.tools]
        state.messages = [ChatMessageSystem(content=ctx.system_prompt), ChatMessageUser(content=ctx.user_prompt)]
        self._last: ModelOutput | None = None

    async def complete(self) -> ModelResponse:
        output = await self.model.generate(self.state.messages, tools=self.tools)
        if output.error:
            raise RuntimeError(output.error)
        self._last = output
        self.state.output = output
        u = output.usage
        calls = [ToolCall(id=c.id, name=c.function, args=c.arguments if c.parse_error is None
                          else {"_raw": c.parse_error}) for c in (output.message.tool_calls or [])]
        return ModelResponse(
            text=output.message.text or "",
            tool_calls=calls,
            prompt_tokens=u.input_tokens if u else 0,
            completion_tokens=u.output_tokens if u else 0,
            cache_read_tokens=(u.input_tokens_cache_read or 0) if u else 0,
            cache_creation_tokens=(u.input_tokens_cache_write or 0) if u else 0,
            raw=output.message,
        )

    def add_assistant(self, response: ModelResponse) -> None:
        msg = response.raw if isinstance(response.raw, ChatMessageAssistant) else ChatMessageAssistant(
            content=response.text,
            tool_calls=[InspectToolCall(id=c.id, function=c.name, arguments=c.args if isinstance(c.args, dict)
                                        else {}) for c in response.tool_calls] or None,
        )
        self.state.messages.append(msg)

    def add_tool_results(self, results: list[tuple[ToolCall, str]]) -> None:
        for call, text in results:
            self.state.messages.append(ChatMessageTool(content=text, tool_call_id=call.id, function=call.name))

    def add_user(self, text: str) -> None:
        self.state.messages.append(ChatMessageUser(content=text))

    def transcript(self) -> list[dict[str, Any]]:
        return [
            {"role": m.role, "name": getattr(m, "function", None), "tool_call_id": getattr(m, "tool_call_id", None),
             "content": m.text}
            for m in self.state.messages
        ]


class _InspectBackend:
    """The loop's backend interface: one InspectConversation per attempt."""

    name = "inspect"

    def __init__(self, model: Model, state: TaskState) -> None:
        self.model = model
        self.state = state

    def start(self, ctx: SampleContext) -> InspectConversation:
        return InspectConversation(self.model, self.state, ctx)


def _items(release: Release, condition: str, caps: Caps) -> list[Sample]:
    out = []
    for item in release.items:
        out.append(Sample(
            id=item.id,
            input=prompts.first_user_message(condition),
            choices=list(item.options),
            target=LETTERS[item.correct_index],
            metadata={"seed_paper_id": item.seed_paper_id, "question": item.question,
                      "system_prompt": prompts.system_prompt(item, condition, caps)},
        ))
    return out


@solver
def agenthop_loop(release: Release, condition: str, caps: Caps, seed: int) -> Any:
    """The project's agent loop for one sample; its attempts go to the store under ``agenthop``."""
    cfg = LoopConfig(caps=caps, condition=condition, record_messages=False, sample_retry_waits=(0.0,))

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        sid = str(state.sample_id)
        item = release.item(sid)
        attempts = await run_sample(item, release.graphs[sid], release.papers, release.labels.get(sid, []),
                                    _InspectBackend(get_model(), state), cfg,
                                    _sample_seed(seed, state.epoch - 1, sid))
        record = [{"trajectory": a.trajectory, "turns": a.turns, "tool_calls": a.tool_calls} for a in attempts]
        state.store.set(STORE_KEY, record)
        final = attempts[-1].trajectory
        state.output.completion = final["predicted_answer"] or ""
        return state

    return solve


@scorer(metrics=[accuracy(), stderr()])
def agenthop_correct() -> Any:
    """1 when the final attempt's submitted option is the item's correct one (AgentHop's is_correct)."""

    async def score(state: TaskState, target: Target) -> Score:
        record = state.store.get(STORE_KEY) or []
        final = record[-1]["trajectory"] if record else {}
        return Score(
            value="C" if final.get("is_correct") else "I",
            answer=final.get("predicted_answer"),
            metadata={"terminated_by": final.get("terminated_by"), "budget_used": final.get("budget_used"),
                      "attempts": len(record)},
        )

    return score


@scorer(metrics=[mean()])
def agenthop_budget_used() -> Any:
    """Budget points the final attempt spent."""

    async def score(state: TaskState, target: Target) -> Score:
        record = state.store.get(STORE_KEY) or []
        return Score(value=float(record[-1]["trajectory"]["budget_used"]) if record else 0.0)

    return score


@task(name=TASK_NAME)
def agenthop(
    data: str,
    condition: str = "full",
    budget: int = 30,
    max_turns: int = 20,
    max_total_tokens: int = 200_000,
    limit: int | None = None,
    epochs: int = 1,
    seed: int = 0,
) -> Task:
    """AgentHop on the release at ``data`` (a directory made by ``agenthop-harness make-benchmark``
    or the published release, or ``s3://bucket/prefix`` of one published there: read as
    ``agenthop-harness run --data`` reads it, refused without its completion marker). ``epochs`` > 1
    gives reruns."""
    caps = Caps(budget=budget, max_turns=max_turns, max_total_tokens=max_total_tokens)
    prompts.check_condition(condition)
    release = load_at(data, lambda root: load_release(root, limit=limit))  # s3://: only a complete release
    return Task(
        dataset=MemoryDataset(_items(release, condition, caps), name="agenthop"),
        solver=agenthop_loop(release, condition, caps, seed),
        scorer=[agenthop_correct(), agenthop_budget_used()],
        epochs=epochs,
        metadata={STORE_KEY: {"benchmark_sha256": release.benchmark_sha256, "condition": condition,
                              "budget": budget, "max_turns": max_turns, "max_total_tokens": max_total_tokens,
                              "seed": seed}},
        name=TASK_NAME,
    )

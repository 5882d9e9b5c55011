"""Inspect logs whose tools have AgentDojo's long names (its banking suite: ``get_most_recent_transactions``,
``update_scheduled_transaction``, ...), written offline by Inspect itself with scripted ``mockllm`` models.

Two models, ``mockllm/teller`` and ``mockllm/auditor``, four samples each. Every sample is a fixed chain of
calls (CHAINS) and then an answer, so the trigrams, transitions and tool counts are known: the reports'
tables of tool names (trigrams above all, three such names in one cell) must fit a 1,024 px page.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

TASK = "dojo_banking"
MODELS = ("teller", "auditor")
TOOLS = ("get_most_recent_transactions", "get_scheduled_transactions", "update_scheduled_transaction",
         "schedule_transaction", "get_balance", "send_money", "get_iban", "update_user_info")
#: per model and sample: the tools called one per turn, then the answer "done"
CHAINS: dict[str, dict[str, tuple[str, ...]]] = {
    "teller": {
        "u0": ("get_most_recent_transactions", "get_scheduled_transactions", "update_scheduled_transaction"),
        "u1": ("get_most_recent_transactions", "get_scheduled_transactions", "update_scheduled_transaction",
               "get_balance"),
        "u2": ("get_iban", "get_most_recent_transactions", "schedule_transaction"),
        "u3": ("get_balance", "get_most_recent_transactions", "send_money"),
    },
    "auditor": {
        "u0": ("get_scheduled_transactions", "get_most_recent_transactions", "update_scheduled_transaction"),
        "u1": ("get_most_recent_transactions", "get_most_recent_transactions", "update_user_info"),
        "u2": ("get_iban", "get_scheduled_transactions", "update_scheduled_transaction", "schedule_transaction"),
        "u3": ("get_balance", "send_money"),
    },
}


def _scripted(model: str) -> Any:
    from inspect_ai.model import ModelOutput, ModelUsage

    def reply(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> Any:
        sample = next(m.text for m in messages if m.role == "user").split(":")[0]
        turn = sum(1 for m in messages if m.role == "assistant")
        chain = CHAINS[model][sample]
        if turn < len(chain):
            out = ModelOutput.for_tool_call(model, chain[turn], {}, tool_call_id=f"c{turn}")
        else:
            out = ModelOutput.from_content(model=model, content="done")
        out.usage = ModelUsage(input_tokens=200 + 20 * turn, output_tokens=30, total_tokens=230 + 20 * turn)
        return out

    return reply


def _tool(name: str) -> Any:
    from inspect_ai.tool import ToolDef

    async def execute() -> str:
        return f"{name}: ok"

    return ToolDef(execute, name=name, description=f"The banking suite's {name}.", parameters={})


def dojo_task() -> Any:
    from inspect_ai import Task
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.scorer import includes
    from inspect_ai.solver import generate, use_tools

    samples = [Sample(id=s, input=f"{s}: settle the user's scheduled payments", target="done") for s in CHAINS["teller"]]
    return Task(name=TASK, dataset=MemoryDataset(samples, name="dojo-items"),
                solver=[use_tools(*[_tool(t) for t in TOOLS]), generate()], scorer=includes())


def write_dojo_logs(out: Path) -> list[Path]:
    """One .eval log per model (MODELS order)."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    out.mkdir(parents=True, exist_ok=True)
    models = [get_model(f"mockllm/{m}", custom_outputs=_scripted(m)) for m in MODELS]
    logs = inspect_eval(dojo_task(), model=models, log_dir=str(out), display="none", max_samples=1,
                        score_display=False)
    bad = [log.status for log in logs if log.status != "success"]
    assert not bad, f"the fixture eval did not succeed: {bad} {[log.error for log in logs]}"
    by_model = {log.eval.model: Path(log.location) for log in logs}
    return [by_model[f"mockllm/{m}"] for m in MODELS]

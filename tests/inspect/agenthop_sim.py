"""A harness simulated agent as an Inspect ``mockllm`` script (the same scripted model on both sides).

``SimScript(release, "verifier", {"archetype": "verifier"})`` is a ``custom_outputs`` callable:
it recognises the sample by its system prompt, starts the simulated agent the harness would start
for it (same policy, model name and seeds), feeds it what the loop sent since its last reply (tool
results with their footers, nudges, advisories) and returns its next reply with its usage.
"""

from __future__ import annotations

import hashlib
from typing import Any

from agenthop.harness.backends.base import SampleContext, ToolCall
from agenthop.harness.backends.sim import SimBackend
from agenthop.harness.benchmarks.agenthop.policies.archetypes import policy_from_spec
from agenthop.harness.benchmarks.agenthop import prompts


def _seed(kind: str, *parts: Any) -> int:
    digest = hashlib.sha256("/".join([kind, *map(str, parts)]).encode()).digest()
    return int.from_bytes(digest[:8], "big") & (2**63 - 1)


class SimScript:
    def __init__(self, release: Any, name: str, sim: dict[str, Any], condition: str = "full",
                 seed: int = 0, replicate: int = 0) -> None:
        self.release = release
        self.name = name
        self.backend = SimBackend(policy_from_spec(dict(sim), where=name), name, _seed("backend", seed, name, replicate))
        self.condition = condition
        self.seed, self.replicate = seed, replicate
        caps = prompts.PromptCaps()
        self.by_prompt = {prompts.system_prompt(it, condition, caps): it for it in release.items}
        self.attempts: dict[str, int] = {}
        self.live: dict[str, tuple[Any, Any, int]] = {}  # sample -> (conversation, last reply, messages seen)

    def __call__(self, messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> Any:
        item = self.by_prompt[messages[0].text]
        sid = item.id
        if len(messages) == 2:  # a new attempt: system prompt and first user message
            attempt = self.attempts.get(sid, -1) + 1
            self.attempts[sid] = attempt
            ctx = SampleContext(
                item=item, system_prompt=messages[0].text, user_prompt=messages[1].text,
                tools=prompts.tool_specs(self.condition), condition=self.condition,
                labels=list(self.release.labels.get(sid, [])), graph=self.release.graphs[sid],
                papers=self.release.papers, seed=_seed("sample", self.seed, self.replicate, sid), attempt=attempt,
            )
            conv, seen = self.backend.start(ctx), 2
        else:
            conv, last, seen = self.live[sid]
            conv.add_assistant(last)
            seen += 1  # the reply itself
            calls = {c.id: c for c in last.tool_calls}
            pending: list[tuple[ToolCall, str]] = []
            for m in messages[seen:]:
                if m.role == "tool":
                    pending.append((calls[m.tool_call_id], m.text))
                    continue
                if pending:
                    conv.add_tool_results(pending)
                    pending = []
                conv.add_user(m.text)
            if pending:
                conv.add_tool_results(pending)
            seen = len(messages)
        resp = conv.step()  # the simulated agent's complete() awaits nothing
        self.live[sid] = (conv, resp, seen)
        return _output(self.name, resp)


def _output(model: str, resp: Any) -> Any:
    from inspect_ai.model import ChatCompletionChoice, ChatMessageAssistant, ModelOutput, ModelUsage
    from inspect_ai.tool import ToolCall as InspectToolCall

    calls = [InspectToolCall(id=c.id, function=c.name, arguments=c.args if isinstance(c.args, dict) else {})
             for c in resp.tool_calls]
    msg = ChatMessageAssistant(content=resp.text, tool_calls=calls or None, model=model, source="generate")
    usage = ModelUsage(
        input_tokens=resp.prompt_tokens, output_tokens=resp.completion_tokens,
        total_tokens=resp.prompt_tokens + resp.completion_tokens + resp.cache_read_tokens + resp.cache_creation_tokens,
        input_tokens_cache_read=resp.cache_read_tokens or None,
        input_tokens_cache_write=resp.cache_creation_tokens or None,
    )
    return ModelOutput(model=model, choices=[ChatCompletionChoice(message=msg, stop_reason="tool_calls" if calls else "stop")],
                       usage=usage)

"""``agenthop-ingest --atif PATH``: find and check ATIF trajectory files (docs/interchange.md#importing).

The checks follow Harbor's published trajectory models (``harbor.models.trajectories``, 0.25.0): closed
objects (an unknown key is an error), ``schema_version`` ``ATIF-v1.0`` to ``ATIF-v1.8``, ``agent`` with
``name`` and ``version``, at least one step, ``step_id`` counting 1, 2, 3 ..., ``source`` one of system,
user, agent, a ``message``, tool calls, metrics and model fields only on agent steps, tool-call
``arguments`` an object, every observation result's ``source_call_id`` a call of the same step.
Each problem is an IngestError of one line naming the file, the line and the field.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agenthop.ingest.conform import IngestError

from .interchange_json import discover as find_json, line_of, read_json

VERSIONS = tuple(f"ATIF-v1.{i}" for i in range(9))
_ROOT = {"schema_version", "session_id", "trajectory_id", "agent", "steps", "notes", "final_metrics",
         "continued_trajectory_ref", "extra", "subagent_trajectories"}
_AGENT = {"name", "version", "model_name", "tool_definitions", "extra"}
_STEP = {"step_id", "timestamp", "source", "model_name", "reasoning_effort", "message", "reasoning_content",
         "tool_calls", "observation", "metrics", "is_copied_context", "llm_call_count", "extra"}
_AGENT_ONLY = ("model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics")
_CALL = {"tool_call_id", "function_name", "arguments", "extra"}
_RESULT = {"source_call_id", "content", "subagent_trajectory_ref", "extra"}
_METRICS = {"prompt_tokens", "completion_tokens", "cached_tokens", "cost_usd", "prompt_token_ids",
            "completion_token_ids", "logprobs", "extra"}
_FINAL = {"total_prompt_tokens", "total_completion_tokens", "total_cached_tokens", "total_cost_usd", "total_steps",
          "extra"}


@dataclass
class AtifFile:
    path: Path
    doc: dict[str, Any]
    content_sha256: str


def discover(paths: Sequence[Path]) -> list[Path]:
    """The trajectory files below ``paths`` (a file itself, or every ``*.json`` of a folder), sorted."""
    return find_json(paths, "--atif")


class _Checker:
    def __init__(self, path: Path, text: str) -> None:
        self.path, self.text = path, text

    def fail(self, where: list[Any], message: str) -> None:
        shown = ""
        for p in where:
            shown += f"[{p}]" if isinstance(p, int) else (f".{p}" if shown else str(p))
        raise IngestError(f"{self.path}: line {line_of(self.text, where, None)}: field {shown or '(the document)'}: "
                          f"{message} (ATIF)")

    def obj(self, value: Any, where: list[Any], allowed: set[str], required: Sequence[str] = ()) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.fail(where, "must be an object")
        for k in value:
            if k not in allowed:
                self.fail([*where, k], "unknown field (ATIF objects are closed)")
        for k in required:
            if k not in value:
                self.fail([*where, k], "required field missing")
        return value

    def number(self, value: Any, where: list[Any], integer: bool = False) -> None:
        ok = isinstance(value, int) if integer else isinstance(value, (int, float))
        if value is not None and (isinstance(value, bool) or not ok):
            self.fail(where, "must be an integer" if integer else "must be a number")


def check(doc: Any, path: Path, text: str) -> None:
    c = _Checker(path, text)
    c.obj(doc, [], _ROOT, ("agent", "steps"))
    version = doc.get("schema_version", VERSIONS[-1])
    if version not in VERSIONS:
        c.fail(["schema_version"], f"{version!r} is not one of ATIF-v1.0 ... ATIF-v1.8")
    agent = c.obj(doc["agent"], ["agent"], _AGENT, ("name", "version"))
    for k in ("name", "version"):
        if not isinstance(agent[k], str):
            c.fail(["agent", k], "must be a string")
    steps = doc["steps"]
    if not isinstance(steps, list) or not steps:
        c.fail(["steps"], "must be a list of at least one step")
    for i, step in enumerate(steps):
        where: list[Any] = ["steps", i]
        c.obj(step, where, _STEP, ("step_id", "source", "message"))
        if step["step_id"] != i + 1:
            c.fail([*where, "step_id"], f"is {step['step_id']!r}; steps count 1, 2, 3 ... (expected {i + 1})")
        if step["source"] not in ("system", "user", "agent"):
            c.fail([*where, "source"], f"{step['source']!r} is not one of system, user, agent")
        if not isinstance(step["message"], (str, list)):
            c.fail([*where, "message"], "must be a string or a list of content parts")
        if step["source"] != "agent":
            for k in _AGENT_ONLY:
                if step.get(k) is not None:
                    c.fail([*where, k], "only agent steps may have it")
        ids = []
        for j, call in enumerate(step.get("tool_calls") or []):
            cw = [*where, "tool_calls", j]
            c.obj(call, cw, _CALL, ("tool_call_id", "function_name", "arguments"))
            if not isinstance(call["arguments"], dict):
                c.fail([*cw, "arguments"], "must be an object")
            ids.append(call["tool_call_id"])
        obs = step.get("observation")
        if obs is not None:
            c.obj(obs, [*where, "observation"], {"results"}, ("results",))
            for j, res in enumerate(obs["results"]):
                rw = [*where, "observation", "results", j]
                c.obj(res, rw, _RESULT)
                if res.get("source_call_id") is not None and res["source_call_id"] not in ids:
                    c.fail([*rw, "source_call_id"], f"{res['source_call_id']!r} is no tool call of this step")
        if step.get("metrics") is not None:
            m = c.obj(step["metrics"], [*where, "metrics"], _METRICS)
            for k in ("prompt_tokens", "completion_tokens", "cached_tokens"):
                c.number(m.get(k), [*where, "metrics", k], integer=True)
    if doc.get("final_metrics") is not None:
        fm = c.obj(doc["final_metrics"], ["final_metrics"], _FINAL)
        for k in ("total_prompt_tokens", "total_completion_tokens", "total_cached_tokens", "total_steps"):
            c.number(fm.get(k), ["final_metrics", k], integer=True)
    if doc.get("extra") is not None and not isinstance(doc["extra"], dict):
        c.fail(["extra"], "must be an object")


def read_file(path: Path) -> AtifFile:
    doc, text = read_json(path)
    check(doc, path, text)
    return AtifFile(path, doc, hashlib.sha256(text.encode("utf-8")).hexdigest())

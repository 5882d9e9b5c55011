"""A scripted SciExplore search agent played by the loopback OpenAI chat-completions server.

It decides only from what a real model would see: the task prompt, how many assistant turns came
before, and the tool results so far (so two runs over the same corpus make the same calls). Per task:

- turn 0: ``web_search`` and ``scholar_search`` with the question's first content words (parallel);
- turn 1: ``db_search`` with the title of the first hit so far; for one task in four the agent then
  abstains (``Final answer: I could not find the answer.``: abandonment after three searches);
- turn 2: ``open_page`` of the first hit, and for one task in three also of an id that does not exist
  (a ``tool_error`` call);
- turn 3: the final answer in the task type's shape (the prompt's answer format), built from the
  opened page's title: T1/T2 a ``Final answer:`` line, T3 a JSON block per slot, T4 a Markdown table
  with the prompt's columns.

Usage per turn: prompt 500 + 100 per turn, completion 40 (nothing cached).

:func:`native_responder` plays the same kind of agent over the OpenAI Responses API with the provider's
own search (``--search native``): one response per task with ``native_searches(prompt)`` queries as
``web_search_call`` items (with sources) and the final message, usage :func:`native_usage`.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from . import openai_server, responses_server
from .scripted_http import Recorded, Reply

ABSTAIN = "I could not find the answer."
MISSING_DOC = "doc_99999"
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9-]{3,}")
_HIT = re.compile(r"^\[\d+\] (\S+) ", re.MULTILINE)
_TITLE = re.compile(r"^    Title: (.*)$", re.MULTILINE)
_SLOTS = re.compile(r"mapping every slot \(([^)]*)\)")
_HEADER = re.compile(r"^(\|.*\|)\n\|(?:---\|)+$", re.MULTILINE)


def digest(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest(), 16)


def query_of(question: str, n: int = 6) -> str:
    return " ".join(_WORD.findall(question)[:n]) or question[:40]


def final_text(prompt: str, results: list[str]) -> str:
    """The answer in the shape the prompt's answer format asks for, from the opened page."""
    page = next((r for r in results if re.match(r"^doc_\S+: ", r)), "")
    title = page.split("\n", 1)[0].split(": ", 1)[1] if page else "unknown"
    slots = _SLOTS.search(prompt)
    if slots:
        refs = {s.strip(): [{"title": title}] for s in slots.group(1).split(",")}
        return f"References found:\n```json\n{json.dumps(refs)}\n```"
    header = _HEADER.search(prompt)
    if header:
        cols = [c.strip() for c in header.group(1).strip("|").split("|")]
        row = "| " + " | ".join([title] + ["n/a"] * (len(cols) - 1)) + " |"
        return f"Here is the table.\n\n{header.group(1)}\n|" + "---|" * len(cols) + f"\n{row}\n"
    return f"I read the page of {title}.\nFinal answer: {title}"


def decide(prompt: str, turn: int, results: list[str]) -> list[tuple[str, dict[str, Any]]] | str:
    """The next calls (name, args) or the final text."""
    question = prompt.split("\n\nAnswer format:", 1)[0]
    variant = digest(question)
    if turn == 0:
        q = query_of(question)
        return [("web_search", {"query": q}), ("scholar_search", {"query": q})]
    hits = [h for r in results for h in _HIT.findall(r)]
    titles = [t for r in results for t in _TITLE.findall(r)]
    if turn == 1:
        return [("db_search", {"query": titles[0] if titles else query_of(question, 3)})]
    if turn == 2 and variant % 4 == 1:
        return f"Final answer: {ABSTAIN}"
    if turn == 2:
        calls: list[tuple[str, dict[str, Any]]] = [("open_page", {"id": hits[0] if hits else MISSING_DOC})]
        if variant % 3 == 0:
            calls.append(("open_page", {"id": MISSING_DOC}))
        return calls
    return final_text(prompt, results)


def usage(turn: int) -> tuple[int, int]:
    return 500 + 100 * turn, 40


def responder(rec: Recorded) -> Reply:
    messages = rec.body["messages"]
    turn = sum(1 for m in messages if m["role"] == "assistant")
    results = [m["content"] for m in messages if m["role"] == "tool"]
    prompt = next(m["content"] for m in messages if m["role"] == "user")
    action = decide(prompt, turn, results)
    p, c = usage(turn)
    if isinstance(action, str):
        return openai_server.completion(content=action, prompt_tokens=p, completion_tokens=c)
    calls = [openai_server.tool_call(f"call_{turn}_{i}", name, args) for i, (name, args) in enumerate(action)]
    return openai_server.completion(tool_calls=calls, prompt_tokens=p, completion_tokens=c)


def slow_responder(delay_s: float):
    """The same agent answering every request after ``delay_s`` seconds (to interrupt runs mid-way)."""
    def answer(rec: Recorded) -> Reply:
        reply = responder(rec)
        reply.delay_s = delay_s
        return reply
    return answer


def native_searches(prompt: str) -> list[str]:
    """The queries the native agent's provider runs for a task: one to three, from the question."""
    question = prompt.split("\n\nAnswer format:", 1)[0]
    words = _WORD.findall(question)
    return [" ".join(words[k: k + 4]) for k in range(1 + digest(question) % 3)]


def native_usage(prompt: str) -> tuple[int, int, int]:
    """(input_tokens, cached tokens, output_tokens) the Responses API reports for a task."""
    n = len(native_searches(prompt))
    return 4000 + 1000 * n, 1500, 300 + 7 * n


def native_responder(rec: Recorded) -> Reply:
    body = rec.body
    prompt = next(i["content"] for i in body["input"] if i.get("role") == "user")
    conv = digest(prompt) % 10**8
    queries = native_searches(prompt)
    output = [responses_server.web_search_call(f"ws_{conv}_{k}", q, sources=[f"https://search.example/{conv}/{k}"])
              for k, q in enumerate(queries)]
    output.append(responses_server.message(f"msg_{conv}", final_text(prompt, [f"doc_x: {queries[0]}"])))
    inp, cached, out = native_usage(prompt)
    return responses_server.response(output, input_tokens=inp, output_tokens=out, cached=cached)

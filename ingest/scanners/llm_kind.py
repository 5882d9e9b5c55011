"""``llm`` scanners: a prompt over each attempt's transcript, answered by a model through the harness's backends.

Pure: the transcript text, the prompt, the cache key and the reading of a reply; calling the model is
harness/ask.py's (cached by prompt hash, resumable, cost-capped). The transcript is the attempt's
stored messages when it has them, else its turns and tool calls; a transcript longer than the
scanner's ``max_chars`` keeps its start and its end, with a marker saying how much was cut.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from typing import Any

from .definitions import NUMBER, TRANSCRIPT_SLOT, YES_NO

SYSTEM_PROMPT = (
    "You classify the behaviour of an AI agent from the transcript of one of its attempts at a task. "
    "Answer the question about the transcript; put the answer on the first line, then at most two sentences "
    "of explanation."
)
_YES_NO = re.compile(r"\b(yes|no)\b", re.I)
_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")


def render_messages(rows: Iterable[tuple[Any, ...]]) -> str:
    """Transcript text from (idx, role, name, content) rows of raw.messages."""
    out = []
    for idx, role, name, content in rows:
        who = f"{role} ({name})" if name else str(role)
        out.append(f"[{idx}] {who}: {content or ''}")
    return "\n".join(out)


def render_steps(turns: Iterable[tuple[Any, ...]], calls: Iterable[tuple[Any, ...]]) -> str:
    """Transcript text from (turn, role, error_text) turn rows and (turn, seq, tool, args_json, status,
    answer) call rows, for attempts recorded without messages."""
    by_turn: dict[int, list[tuple[Any, ...]]] = {}
    for c in calls:
        by_turn.setdefault(int(c[0]), []).append(c)
    out = []
    for turn, role, error_text in turns:
        line = f"[turn {turn}] {role}" + (f": {error_text}" if error_text else "")
        out.append(line)
        for _, seq, tool, args, status, answer in by_turn.get(int(turn), []):
            out.append(f"  call #{seq} {tool}({args}) -> {status}" + (f"; answer: {answer}" if answer else ""))
    return "\n".join(out)


def clip(text: str, max_chars: int) -> str:
    """``text`` cut to ``max_chars`` characters, its start and end kept (module docstring)."""
    if len(text) <= max_chars:
        return text
    cut = len(text) - max_chars
    marker = f"\n[... {cut} characters left out ...]\n"
    head = (max_chars - len(marker)) // 2
    tail = max_chars - len(marker) - head
    return text[:head] + marker + text[len(text) - tail:]


def answer_instruction(answer: Any) -> str:
    if answer == YES_NO:
        return "Answer yes or no."
    if answer == NUMBER:
        return "Answer with a number."
    return "Answer with exactly one of: " + ", ".join(answer) + "."


def build_prompt(options: dict[str, Any], transcript: str) -> str:
    """The user prompt of one unit: the scanner's prompt with the (clipped) transcript in its slot, and what
    form of answer is asked for."""
    body = options["prompt"].replace(TRANSCRIPT_SLOT, clip(transcript, int(options["max_chars"])))
    return body + "\n\n" + answer_instruction(options["answer"])


def system_prompt(options: dict[str, Any]) -> str:
    return options.get("system") or SYSTEM_PROMPT


def prompt_key(options: dict[str, Any], prompt: str) -> str:
    """Cache key of one call: SHA-256 of the backend, model, system prompt and prompt."""
    parts = (options["backend"], options["model"], system_prompt(options), prompt)
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


def read_answer(answer: Any, reply: str) -> tuple[float | None, str | None] | None:
    """(value, label) a reply gives, or None when it gives no answer of the asked form. yes/no: 1.0 / 0.0;
    a number: the first number; a label set: the first label named (as a word, any case), its value the
    label's position in the set (0 for the first)."""
    text = reply or ""
    if answer == YES_NO:
        m = _YES_NO.search(text)
        return None if m is None else (1.0 if m.group(1).lower() == "yes" else 0.0, None)
    if answer == NUMBER:
        m = _NUMBER.search(text)
        return None if m is None else (float(m.group(0)), None)
    found: list[tuple[int, int]] = []
    for i, label in enumerate(answer):
        m = re.search(r"(?<![\w])" + re.escape(label) + r"(?![\w])", text, re.I)
        if m is not None:
            found.append((m.start(), i))
    if not found:
        return None
    i = min(found)[1]
    return float(i), answer[i]

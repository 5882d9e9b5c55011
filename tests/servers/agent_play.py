"""One scripted agent played by loopback servers over three protocols (OpenAI chat completions, Gemini
generateContent, OpenAI Responses), so that the same benchmark through several backends can be
compared call for call.

The agent decides from what any provider would see: the system prompt (seed id, question), the
number of model turns so far and the tool results in order (footers stripped, so token counts do
not steer it). Per item a variant (from a hash of the system prompt) picks one of four paths:

0. references + info of the seed (parallel), sections of the first full-text reference, read (A), submit;
1. as 0, plus a read of a section that does not exist (section_not_found) next to the list;
2. as 0, plus a search next to the list;
3. as 0, but with a text-only turn (nudged) before the read.

The submitted letter is a hash of every result text, so it depends on what the tools returned.
Every protocol reports the same usage (prompt 1,000 + 100 per turn, 50 completion tokens, nothing
cached), so the footers, and therefore every tool result, are identical across the backends.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from typing import Any

from . import gemini_server, openai_server, responses_server
from .scripted_http import Recorded, Reply

_SEED = re.compile(r"- \*\*ID\*\*: (\S+)")
_AVAILABLE_REF = re.compile(r"\[\d+\] (\S+)\n[^\n]*\n[^\n]*\n\s+Full text: Available")
Action = list[tuple[str, dict[str, Any]]] | str


def _digest(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest(), 16)


def decide(system: str, turn: int, results: list[str]) -> Action:
    """The next calls (name, args) or a text-only answer."""
    results = [r.split("\nTurn: ", 1)[0] for r in results]
    seed_match = _SEED.search(system)
    seed = seed_match.group(1) if seed_match else "unknown"
    variant = _digest(system) % 4
    if turn == 0:
        return [("get_references", {"paper_id": seed}), ("get_paper_info", {"paper_id": seed})]
    refs = _AVAILABLE_REF.findall(results[0]) if results else []
    gold = refs[0] if refs else seed
    if turn == 1:
        calls: list[tuple[str, dict[str, Any]]] = [("list_sections", {"paper_id": gold})]
        if variant == 1:
            calls.append(("read_section", {"paper_id": gold, "section": "No Such Section Anywhere"}))
        if variant == 2:
            calls.append(("search_papers", {"query": "learning benchmark results", "top_k": 3}))
        return calls
    if variant == 3 and turn == 2:
        return "Let me look at the first section before answering."
    if turn == (3 if variant == 3 else 2):
        return [("read_section", {"paper_id": gold, "section": "A"})]
    letter = "ABCD"[_digest("\n".join(results)) % 4]
    return [("submit_answer", {"answer": letter, "reasoning": f"after {len(results)} results"})]


def _usage(turn: int) -> tuple[int, int]:
    return 1000 + 100 * turn, 50


def openai_responder(rec: Recorded) -> Reply:
    messages = rec.body["messages"]
    turn = sum(1 for m in messages if m["role"] == "assistant")
    results = [m["content"] for m in messages if m["role"] == "tool"]
    action = decide(messages[0]["content"], turn, results)
    prompt, completion = _usage(turn)
    if isinstance(action, str):
        return openai_server.completion(content=action, prompt_tokens=prompt, completion_tokens=completion)
    calls = [openai_server.tool_call(f"call_{turn}_{i}", name, args) for i, (name, args) in enumerate(action)]
    return openai_server.completion(tool_calls=calls, prompt_tokens=prompt, completion_tokens=completion)


def gemini_responder(rec: Recorded) -> Reply:
    body = rec.body
    contents = body["contents"]
    turn = sum(1 for c in contents if c["role"] == "model")
    results = [p["functionResponse"]["response"]["output"] for c in contents if c["role"] == "user"
               for p in c["parts"] if "functionResponse" in p]
    system = body["systemInstruction"]["parts"][0]["text"]
    action = decide(system, turn, results)
    prompt, completion = _usage(turn)
    signature = base64.b64encode(f"sig-{_digest(json.dumps(contents)) % 10**8}".encode()).decode()
    if isinstance(action, str):
        parts = [gemini_server.text(action, signature=signature)]
    else:  # as Gemini 3 does: the signature rides on the first function call of the turn
        parts = [gemini_server.function_call(name, args, signature=signature if i == 0 else None)
                 for i, (name, args) in enumerate(action)]
    return gemini_server.response(parts, prompt=prompt, candidates=completion)


def responses_responder(rec: Recorded) -> Reply:
    """The agent over the Responses API: every turn opens with an encrypted reasoning item."""
    body = rec.body
    items = body["input"]
    turn = sum(1 for i in items if i.get("type") == "reasoning")
    results = [i["output"] for i in items if i.get("type") == "function_call_output"]
    action = decide(body["instructions"], turn, results)
    prompt, completion = _usage(turn)
    conv = _digest(body["instructions"]) % 10**8  # ids unique per conversation, as the real API's are
    rs = responses_server.reasoning(f"rs_{conv}_{turn}", [], f"ENC-{_digest(json.dumps(items)) % 10**8}")
    if isinstance(action, str):
        output = [rs, responses_server.message(f"msg_{conv}_{turn}", action)]
    else:
        output = [rs] + [responses_server.function_call(f"fc_{conv}_{turn}_{i}", f"call_{conv}_{turn}_{i}", name,
                                                        args) for i, (name, args) in enumerate(action)]
    return responses_server.response(output, input_tokens=prompt, output_tokens=completion)

"""SIMULATED SciExplore systems that search the release's corpus (docs/sciexplore.md#simulated-search-agents).

One archetype per behaviour the SciExplore paper describes, each a policy that calls the offline
tools (``search_tools.CorpusTools``) under its paradigm's caps, reads what they return and writes a
final text in the prompt's format; ``answers.final_answer`` then gives the status and answer:

* ``foundation guesser`` (foundation): no tools; answers from "memory" (the ground truth with a small
  probability, else a plausible wrong guess or an abstention);
* ``shallow searcher`` (search): one or two searches, answers only what the snippets show, otherwise
  abandons the task (premature abandonment: not attempted after at most two searches);
* ``guess-and-verify searcher`` (search): starts from a memory guess and searches for it; a hit that
  seems to confirm it ends the task (a wrong guess that resembles a corpus document gets confirmed);
  after unconfirming searches it stagnates and sometimes states the guess anyway (fabrication);
* ``deep researcher`` (deep_research): follows T1 chains record by record (now and then it takes a
  near-namesake record for the right one, loses the chain and answers with an accession a broad search
  shows), opens candidate papers,
  searches every citation slot and collects table rows from many hits (better recall); sometimes slips on
  the table format (drops the separator line or a column).

"Memory" is the only place the ground truth enters; everything else is read from tool results.
Seeded: the same release, seed and systems give the same responses, byte for byte.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from .answers import final_answer
from .paradigms import caps
from .prompts import ABSTAIN, FINAL_ANSWER, system_prompt, task_prompt
from .release import Release, Task
from .search_tools import CallRecord, CorpusTools, Hit, ToolResult
from .simulate import REPLICATES, write_responses

_ENTRY_RE = re.compile(r"the (.+?) entry (\S+) and follow")
_LINK_RE = re.compile(r"linked to (\S+) \(see ([^)]+)\)")
_ACCESSION_RE = re.compile(r"accession attribute is (\S+?)\.?$")
_BENCHMARK_RE = re.compile(r"new benchmark on (.+?)\. Give")
_CLAIM_RE = re.compile(r"([^.\]]+?) improved [^\[]*\[(CITE_\d+)\]")
_FACTS_RE = re.compile(r"We characterise (\S+) \((.*?)\)\.")
_YEAR_DOI_RE = re.compile(r"\((\d{4})\)\. DOI (\S+?)\.?$")


T = TypeVar("T")
#: a policy step: yields tool calls ``(name, args)``, is sent their ToolResult, returns ``T``
Steps = Generator[tuple[str, dict[str, Any]], ToolResult, T]


class CapReached(Exception):
    """The paradigm's tool-call cap is spent."""


@dataclass
class Session:
    """One task's tool use: the calls made, the tokens a model would have read, the cap."""

    max_calls: int
    calls: list[CallRecord] = field(default_factory=list)
    read_chars: int = 0

    def call(self, name: str, **args: Any) -> Steps[ToolResult]:
        """One tool call: yields ``(name, args)`` to the driver, which sends back the ToolResult."""
        if len(self.calls) >= self.max_calls:
            raise CapReached
        r = yield name, args
        self.calls.append(r.record)
        self.read_chars += len(r.text)
        return r

    @property
    def n_searches(self) -> int:
        return sum(c.is_search for c in self.calls)


@dataclass(frozen=True, slots=True)
class Archetype:
    model: str
    paradigm: str
    behaviour: str  # foundation_guesser | shallow_searcher | guess_and_verify | deep_researcher
    #: probability that "memory" holds the right answer
    recall: float
    #: probability of a slip (a wrong hit taken, a table format broken)
    slip: float = 0.05


ARCHETYPES: tuple[Archetype, ...] = (
    Archetype("mnemo-guess", "foundation", "foundation_guesser", recall=0.12),
    Archetype("skim-search", "search", "shallow_searcher", recall=0.0, slip=0.1),
    Archetype("hunch-check", "search", "guess_and_verify", recall=0.35, slip=0.1),
    Archetype("delve-dr", "deep_research", "deep_researcher", recall=0.0, slip=0.3),
)


# -- final texts -------------------------------------------------------------------------------------

def _final(value: str | None) -> str:
    return f"{FINAL_ANSWER} {value if value else ABSTAIN}"


def _citations_text(refs: dict[str, list[dict[str, Any]]]) -> str:
    return "References per slot:\n```json\n" + json.dumps(refs, ensure_ascii=False) + "\n```"


def _table_text(task: Task, rows: list[dict[str, str]], rng: random.Random, slip: float) -> str:
    if not rows:
        return ABSTAIN
    columns = list(task.columns)
    sep = True
    if rng.random() < slip:  # a format slip: a column dropped or the separator line forgotten
        if rng.random() < 0.5 and len(columns) > 2:
            columns.pop(rng.randrange(1, len(columns)))
        else:
            sep = False
    lines = ["| " + " | ".join(columns) + " |"] + (["|" + "---|" * len(columns)] if sep else [])
    lines += ["| " + " | ".join(r.get(c, "") for c in columns) + " |" for r in rows]
    return "Comparison table from the papers I found:\n\n" + "\n".join(lines)


# -- memory (the only use of the ground truth) ---------------------------------------------------------

def _memory_guess(task: Task, rng: random.Random, recall: float) -> str | None:
    """T1/T2: the right answer with probability ``recall``, else a plausible wrong one (or nothing)."""
    if rng.random() < recall:
        return task.answer
    if task.type == "T1":
        return f"{task.answer[:-2]}{rng.randrange(10, 99)}" if rng.random() < 0.6 else None
    return None  # T2: guessed from the corpus instead (see guess_and_verify)


# -- reading tool results ------------------------------------------------------------------------------

def _follow_chain(s: Session, task: Task, rng: random.Random, slip: float, max_hops: int) -> Steps[str | None]:
    """T1: from the start record along 'linked to' references to the accession; None when lost."""
    m = _ENTRY_RE.search(task.question)
    if not m:
        return None
    db, entity = m.group(1), m.group(2)
    for _ in range(max_hops):
        hits = (yield from s.call("db_search", query=entity, database=db)).hits
        exact = [h for h in hits if h.title == f"{entity} [{db}]"]
        if not exact:
            return None
        hit = exact[0]
        if rng.random() < slip:  # a slip: the near-namesake record (``<name>a``) is taken for this one
            near = (yield from s.call("db_search", query=f"{entity}a", database=db)).hits
            hit = next((h for h in near if h.title == f"{entity}a [{db}]"), hit)
        text = (yield from s.call("open_page", id=hit.id)).text
        if acc := _ACCESSION_RE.search(text.strip()):
            return acc.group(1)
        link = _LINK_RE.search(text)
        if not link:
            return None
        entity, db = link.group(1), link.group(2)
    return None


def _from_snippets(hits: tuple[Hit, ...]) -> str | None:
    for h in hits:
        if acc := _ACCESSION_RE.search(h.snippet.strip()):
            return acc.group(1)
    return None


def _key_paper(s: Session, task: Task, open_top: int) -> Steps[str | None]:
    """T2: open the top hits of a search with the question's terms; the paper naming the benchmark wins."""
    m = _BENCHMARK_RE.search(task.question)
    topic = m.group(1) if m else ""
    hits = (yield from s.call("scholar_search", query=task.question)).hits
    for h in hits[:open_top]:
        if topic and f"benchmark of {topic}" in (yield from s.call("open_page", id=h.id)).text:
            return h.title
    return None


def _reference(s: Session, hit: Hit, open_it: bool) -> Steps[dict[str, Any]]:
    ref: dict[str, Any] = {"title": hit.title, "year": hit.year}
    if open_it and (m := _YEAR_DOI_RE.search((yield from s.call("open_page", id=hit.id)).text.strip())):
        ref["doi"] = m.group(2)
    return ref


def _citations(s: Session, task: Task, per_slot: int, slots: int,
               open_it: bool) -> Steps[dict[str, list[dict[str, Any]]]]:
    out: dict[str, list[dict[str, Any]]] = {g.slot: [] for g in task.groups}
    for claim, slot in _CLAIM_RE.findall(task.paragraph or "")[:slots]:
        prefix = claim.strip()
        hits = (yield from s.call("scholar_search", query=prefix)).hits
        lead = [h for h in hits if h.title.startswith(prefix)]
        rest = [h for h in hits if h not in lead]
        refs = []
        for h in (lead + rest)[:per_slot]:
            refs.append((yield from _reference(s, h, open_it)))
        out[slot] = refs
    return out


def _rows(s: Session, task: Task, queries: list[str], open_it: bool = False) -> Steps[list[dict[str, str]]]:
    """T4: rows from papers stating an entity's values; truncated snippets are opened when ``open_it``."""
    rows: dict[str, dict[str, str]] = {}
    for q in queries:
        for h in (yield from s.call("scholar_search", query=q)).hits:
            m = _FACTS_RE.search(h.snippet)
            if not m and open_it and h.snippet.startswith("We characterise"):
                m = _FACTS_RE.search((yield from s.call("open_page", id=h.id)).text)
            if not m or m.group(1) in rows:
                continue
            facts = dict(part.split(": ", 1) for part in m.group(2).split("; ") if ": " in part)
            rows[m.group(1)] = {task.primary_key: m.group(1)} | {c: facts.get(c, "") for c in task.columns[1:]}
    return list(rows.values())


def _table_queries(task: Task, n: int) -> list[str]:
    base = f"characterise {task.domain}"
    return [base] + [f"{base} {c}" for c in task.columns[1:]][: n - 1]


# -- the four behaviours -------------------------------------------------------------------------------

def _foundation(a: Archetype, task: Task, s: Session, rng: random.Random) -> Steps[str]:
    yield from ()  # no tools
    if task.type in ("T1", "T2"):
        guess = _memory_guess(task, rng, a.recall)
        if guess is None and task.type == "T2" and rng.random() < 0.5:
            guess = f"A survey of {task.domain} methods"
        return f"From what I know of {task.domain}.\n{_final(guess)}"
    if task.type == "T3":
        refs = {g.slot: [{"title": r.title, "year": r.year} for r in g.references if rng.random() < a.recall]
                for g in task.groups}
        return _citations_text(refs) if any(refs.values()) else ABSTAIN
    rows = [dict(r) for r in task.rows if rng.random() < a.recall]
    return _table_text(task, rows, rng, a.slip)


def _shallow(a: Archetype, task: Task, s: Session, rng: random.Random) -> Steps[str]:
    n = 1 + rng.randrange(2)
    if task.type == "T1":
        m = _ENTRY_RE.search(task.question)
        entity = m.group(2) if m else task.question
        hits = (yield from s.call("db_search", query=entity)).hits
        found = _from_snippets(hits)
        if found is None and n == 2 and (link := next((_LINK_RE.search(h.snippet) for h in hits
                                                       if h.title.startswith(f"{entity} [")), None)):
            found = _from_snippets((yield from s.call("db_search", query=link.group(1), database=link.group(2))).hits)
        return _final(found)
    if task.type == "T2":
        hits = (yield from s.call("scholar_search", query=task.question)).hits
        if n == 2:
            hits = (yield from s.call("web_search", query=task.question)).hits
        return _final(hits[0].title if hits and rng.random() > 0.5 else None)
    if task.type == "T3":
        refs = yield from _citations(s, task, per_slot=1, slots=n, open_it=False)
        return _citations_text(refs) if any(refs.values()) else ABSTAIN
    return _table_text(task, (yield from _rows(s, task, _table_queries(task, n))), rng, a.slip)


def _guess_and_verify(a: Archetype, task: Task, s: Session, rng: random.Random) -> Steps[str]:
    if task.type == "T1":
        guess = _memory_guess(task, rng, a.recall)
        if guess is None:
            return _final((yield from _follow_chain(s, task, rng, a.slip, max_hops=2)))
        for attempt in range(3):  # stagnation: the guess is searched again and again
            query = guess if attempt == 0 else f"{guess} accession {task.domain}"
            hits = (yield from s.call("db_search", query=query)).hits
            if any(guess in h.snippet for h in hits):
                return _final(guess)  # confirmed
        return _final(guess if rng.random() < 0.5 else None)  # fabrication after stagnation, or abstention
    if task.type == "T2":
        hits = (yield from s.call("scholar_search", query=task.question)).hits
        if rng.random() < a.recall:
            return _final(task.answer)
        if not hits:
            return _final(None)
        guess = hits[min(len(hits) - 1, rng.randrange(3))].title  # a premature guess among the top hits
        confirm = (yield from s.call("scholar_search", query=guess)).hits
        return _final(guess if confirm and confirm[0].title == guess else None)  # the search "confirms" it
    if task.type == "T3":
        refs = yield from _citations(s, task, per_slot=2, slots=len(task.groups), open_it=False)
        return _citations_text(refs) if any(refs.values()) else ABSTAIN
    return _table_text(task, (yield from _rows(s, task, _table_queries(task, 2))), rng, a.slip / 2)


def _deep(a: Archetype, task: Task, s: Session, rng: random.Random) -> Steps[str]:
    if task.type == "T1":
        found = yield from _follow_chain(s, task, rng, a.slip / 6, max_hops=8)
        if found:  # cross-check the accession on the open web before answering
            yield from s.call("web_search", query=f"{found} {task.domain}")
        else:  # the chain was lost (a slip onto a namesake): an accession from a broad search instead
            found = _from_snippets((yield from s.call("web_search", query=task.question)).hits)
        return _final(found)
    if task.type == "T2":
        yield from s.call("web_search", query=task.question)  # a broad first look, then the literature
        title = yield from _key_paper(s, task, open_top=6)
        if title and rng.random() < a.slip / 3:  # a near-miss among the candidates
            near = (yield from s.call("scholar_search", query=title)).hits
            title = next((h.title for h in near if h.title != title), title)
        return _final(title)
    if task.type == "T3":
        refs = yield from _citations(s, task, per_slot=2, slots=len(task.groups), open_it=True)
        for claim, _slot in _CLAIM_RE.findall(task.paragraph or ""):  # a second query per slot, on the web
            yield from s.call("web_search", query=f"{claim.strip()} {task.domain}")
        return _citations_text(refs)
    queries = _table_queries(task, len(task.columns)) + [f"{task.domain} {task.primary_key} comparison"]
    rows = yield from _rows(s, task, queries, open_it=True)
    return _table_text(task, rows, rng, a.slip)


_POLICIES = {"foundation_guesser": _foundation, "shallow_searcher": _shallow,
             "guess_and_verify": _guess_and_verify, "deep_researcher": _deep}


def policy_steps(a: Archetype, task: Task, s: Session, rng: random.Random) -> Steps[str]:
    """The archetype's attempt at ``task`` as steps: each tool call it makes, then its final text.

    Two drivers play it: :func:`run_task` calls the tools directly (a responses file), and the
    harness's simulated backend (``sim_loop``) hands each call to the agent loop and sends back what
    the loop's tools returned.
    """
    return _POLICIES[a.behaviour](a, task, s, rng)


#: the tools per (release, paradigm), built once per process: indexing a corpus is the costly step
_TOOLS: dict[tuple[str, str], CorpusTools] = {}


def corpus_tools(release: Release, paradigm: str) -> CorpusTools:
    """The offline tools of a paradigm over ``release``'s corpus (its results-per-search cap), cached."""
    key = (release.sha256, paradigm)
    if key not in _TOOLS:
        if len(_TOOLS) > 8:
            _TOOLS.clear()
        _TOOLS[key] = CorpusTools.for_release(release, max_results=max(1, caps(paradigm).max_results))
    return _TOOLS[key]


def run_task(a: Archetype, release: Release, task: Task, replicate: int, seed: int) -> dict[str, Any]:
    """One responses-file line: the archetype's attempt at ``task``."""
    rng = random.Random(f"{seed}:{a.model}:{a.paradigm}:{replicate}:{task.id}")
    s = Session(max_calls=caps(a.paradigm).max_tool_calls)
    tools = corpus_tools(release, a.paradigm)
    terminated_by = "answer"
    steps = policy_steps(a, task, s, rng)
    try:
        call = next(steps)
        while True:
            call = steps.send(tools.call(*call))
    except StopIteration as done:
        text = done.value
    except CapReached:
        text, terminated_by = "", "budget"
    status, answer = final_answer(task, terminated_by, text)
    prompt = len(system_prompt(a.paradigm)) + len(task_prompt(task))
    return {"model": a.model, "paradigm": a.paradigm, "replicate": replicate, "simulated": True,
            "task_id": task.id, "status": status, "answer": answer,
            "trace": [c.trace_entry() for c in s.calls],
            # a model re-reads the conversation each turn: prompt tokens grow with every tool result
            "prompt_tokens": (prompt * (1 + len(s.calls)) + s.read_chars * (1 + len(s.calls)) // 2) // 4,
            "completion_tokens": (len(text) + 40 * len(s.calls)) // 4 + 20,
            "wall_time_s": round(1.0 + 1.5 * len(s.calls) + rng.random(), 2)}


def write_archetype_responses(path: Path, release: Release, seed: int = 0, replicates: int = REPLICATES,
                              archetypes: tuple[Archetype, ...] = ARCHETYPES) -> int:
    """A responses file of the archetypes: one line per (archetype, replicate, task); returns the count."""
    return write_responses(path, release, seed, archetypes, replicates,
                           answer=lambda a, rep, task, s: run_task(a, release, task, rep, s))

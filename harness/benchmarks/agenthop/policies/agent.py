"""The decision engine of a simulated agent: what to call next, and how to react to results.

One :class:`SimAgent` plays one attempt of one sample. ``plan_turn()`` returns the tool calls of the
next turn as ``(name, args)`` pairs; ``observe(name, args, text)`` digests each result the loop sends
back (the footer included), ``observe_user(text)`` the nudges and advisories. The agent may look at
the item's gold and bridge ids, the graph, the paper pool and the recall labels to decide where to
go (docs/simulated_agents.md), but every such look-up goes through a noisy choice governed by
:class:`~.params.PolicyParams`, and what it *knows* (seen papers, listed sections, its budget,
rejections, missing full text, unresolved section names) comes only from the results it received.

Cost: a few microseconds per turn. Nothing here copies or formats large texts; results are only
inspected by prefix, one short substring test (search hits, "Full text available: No") or the
header line of a delivered read.
"""

from __future__ import annotations

import random
from typing import Any

from ....backends.base import SampleContext
from ..sections import alias
from ..tools import TOOL_COSTS
from .evidence import resolve_label
from .params import PolicyParams

Action = tuple[str, dict[str, Any]]

_INFO = "get_paper_info"
_REFS = "get_references"
_SEARCH = "search_papers"
_LIST = "list_sections"
_READ = "read_section"
_THINK = "think"
_SUBMIT = "submit_answer"
_LETTERS = "ABCD"
_READ_COST = TOOL_COSTS[_READ]

# What a delivered read of a gold paper is worth as evidence (1.0 = a directly labelled section).
_OFF_LABEL_EVIDENCE = 0.5

_THINK_AFTER_READ = "Reviewing what this section says about the question and what is still missing."
_THINK_BEFORE_SUBMIT = "Comparing the options against the evidence gathered so far before answering."
_THINK_CLOSED = "Recalling what the literature says about each option."
_REASON_EVIDENCE = "The section read supports this option."
_REASON_GUESS = "No decisive evidence found; best guess from background knowledge."


def _cap_from_prompt(prompt: str, marker: str, default: int) -> int:
    """Read a cap stated in the system prompt (``- **Budget**: 30 points``); default if absent."""
    i = prompt.find(marker)
    if i < 0:
        return default
    i += len(marker)
    j = i
    n = len(prompt)
    while j < n and prompt[j].isdigit():
        j += 1
    return int(prompt[i:j]) if j > i else default


class SimAgent:
    __slots__ = (
        "p", "rng", "item", "nodes", "edges", "papers", "labels", "tools", "closed", "golds",
        "gold_set", "n_needed", "seed_id", "seen", "seen_set", "expanded", "info_done", "listed",
        "no_text", "dropped", "reads", "active", "covered", "stage", "inspect", "planned",
        "labelled", "parents", "turn", "budget_total", "budget_used", "must_submit",
        "pending_think", "just_thought", "post", "extra_left", "patience", "careful",
        "read_nongold", "read_seed", "searches", "pending", "turn_cost", "chose", "nav_next", "path_known",
    )

    def __init__(self, params: PolicyParams, ctx: SampleContext, rng: random.Random) -> None:
        p = self.p = params
        self.rng = rng
        item = self.item = ctx.item
        graph = ctx.graph
        self.nodes = graph.nodes if graph is not None else {}
        self.edges = graph.edges if graph is not None else {}
        self.papers = ctx.papers
        self.labels = ctx.labels
        tools = self.tools = {t.name for t in ctx.tools}
        self.closed = _READ not in tools and _REFS not in tools and _INFO not in tools
        self.golds = item.gold_paper_ids
        self.gold_set = frozenset(self.golds)
        self.n_needed = max(1, len(self.golds))
        seed = self.seed_id = item.seed_paper_id
        self.seen = [seed]
        self.seen_set = {seed}
        self.expanded: set[str] = set()
        self.info_done: set[str] = set()
        self.listed: set[str] = set()
        self.no_text: set[str] = set()
        self.dropped: set[str] = set()
        self.reads: dict[str, list[int]] = {}
        self.active: list[str] = []
        self.covered: list[str] = []
        self.stage: dict[str, int] = {}
        self.inspect: dict[str, bool] = {}
        self.planned: dict[str, int] = {}
        self.labelled: dict[str, tuple[int, ...]] = {}
        self.parents: dict[str, str | None] = {}
        self.turn = 0
        prompt = ctx.system_prompt
        self.budget_total = _cap_from_prompt(prompt, "**Budget**: ", 30)
        self.budget_used = 0
        self.must_submit = False
        self.pending_think = False
        self.just_thought = False
        self.post: str | None = None
        self.extra_left = 0
        self.patience = p.patience + rng.randint(-3, 3)
        self.careful = p.extra_reads_after_gold < 0.5 and p.read_greed < 0.5
        self.read_nongold = False
        self.read_seed = False
        self.searches = 0
        self.pending: set[tuple[str, str]] = set()
        self.turn_cost = 0
        self.chose = False
        self.nav_next: str | None = None
        # Without search_papers (the no_search condition) the agent must know which reference leads to
        # a gold paper: it does with probability navigation_skill per item, otherwise it can only
        # explore references at random. With search, a missing path is made up for by searching (no
        # draw, so the full condition's random stream is unaffected).
        self.path_known = _SEARCH in self.tools or rng.random() < p.navigation_skill

    # ------------------------------------------------------------------ turn planning

    def plan_turn(self) -> list[Action]:
        p = self.p
        rng = self.rng
        k = 1
        if p.parallel_calls > 1.0:
            q = 1.0 - 1.0 / p.parallel_calls
            while k < 6 and rng.random() < q:
                k += 1
        self.pending.clear()
        self.turn_cost = 0
        self.chose = False
        out: list[Action] = []
        while len(out) < k:
            a = self._next(len(out))
            if a is None:
                break
            out.append(a)
            if a[0] == _SUBMIT:
                break
        self.turn += 1
        return out

    def _emit(self, name: str, args: dict[str, Any], pid: str = "") -> Action:
        self.pending.add((name, pid))
        self.turn_cost += TOOL_COSTS[name]
        self.just_thought = name == _THINK
        return (name, args)

    def _affordable(self, cost: int) -> bool:
        """Careful agents never plan a call their remaining budget cannot pay for."""
        if not self.careful:
            return True
        return self.budget_total - self.budget_used - self.turn_cost >= cost

    def _next(self, i: int) -> Action | None:
        if self.closed:
            return self._finish(think=self.rng.random() < self.p.deliberation)
        if self.must_submit or self.turn >= self.patience:
            return self._finish(think=self.rng.random() < self.p.deliberation)
        if self.pending_think:
            self.pending_think = False
            if _THINK in self.tools:
                return self._emit(_THINK, {"reasoning": _THINK_AFTER_READ})
        if self.post is not None:
            return self._after_anchor(i)
        return self._explore(i)

    # -- finishing ------------------------------------------------------------------------

    def _finish(self, think: bool) -> Action:
        if think and not self.just_thought and _THINK in self.tools:
            return self._emit(_THINK, {"reasoning": _THINK_CLOSED if self.closed else _THINK_BEFORE_SUBMIT})
        return self._emit(_SUBMIT, self._answer())

    def _answer(self) -> dict[str, Any]:
        p = self.p
        rng = self.rng
        ev = 0.0 if self.closed else self.evidence()
        p_correct = p.parametric_prior + (p.synthesis_skill - p.parametric_prior) * ev
        item = self.item
        correct = item.correct_index
        if rng.random() < p_correct:
            idx = correct
        else:
            idx = self._distractor(correct)
        return {
            "answer": _LETTERS[idx],
            "reasoning": _REASON_EVIDENCE if ev > 0.0 else _REASON_GUESS,
        }

    def _distractor(self, correct: int) -> int:
        rng = self.rng
        types = self.item.distractor_types
        want = None
        if types is not None and len(types) == 4:
            if self.read_nongold and rng.random() < 0.6:
                want = "wrong_paper"
            elif self.read_seed and rng.random() < 0.6:
                want = "seed_only"
            if want is not None:
                for j in range(4):
                    if j != correct and types[j] == want:
                        return j
        j = rng.randrange(3)
        return j if j < correct else j + 1

    def evidence(self) -> float:
        """Share of the gold papers covered by delivered reads: 1 per paper with a read of a
        directly labelled section, 0.5 per paper read elsewhere (or whose labels resolve to nothing)."""
        total = 0.0
        reads = self.reads
        for g in self.golds:
            done = reads.get(g)
            if not done:
                continue
            lab = self._labelled(g)
            if not lab:
                total += _OFF_LABEL_EVIDENCE
                continue
            for j in done:
                if j in lab:
                    total += 1.0
                    break
            else:
                total += _OFF_LABEL_EVIDENCE
        return total / self.n_needed

    # -- after the anchor read ----------------------------------------------------------------

    def _decide_post(self) -> None:
        p = self.p
        rng = self.rng
        if rng.random() < p.submit_after_gold:
            self.post = "submit"
            self.pending_think = False
            return
        n = 0
        while n < 8 and rng.random() < p.extra_reads_after_gold:
            n += 1
        self.extra_left = n
        self.post = "more" if n else "think"

    def _after_anchor(self, i: int) -> Action | None:
        post = self.post
        if post == "submit":
            return self._emit(_SUBMIT, self._answer())
        if post == "more" and self.extra_left > 0:
            a = self._extra_read()
            if a is not None:
                self.extra_left -= 1
                return a
            if i > 0:
                return None
        return self._finish(think=True if post == "think" else self.rng.random() < self.p.deliberation)

    def _extra_read(self) -> Action | None:
        """One more read after the evidence is in: another section of a covered paper, or a paper
        the agent has not read yet."""
        if not self._affordable(_READ_COST):
            return None
        rng = self.rng
        if self.covered and rng.random() < 0.6:
            t = self.covered[rng.randrange(len(self.covered))]
        else:
            t = self._random_other()
            if t is None:
                t = self.covered[rng.randrange(len(self.covered))] if self.covered else None
        if t is None or (_READ, t) in self.pending or t in self.no_text:
            return None
        return self._read(t)

    # -- exploring ----------------------------------------------------------------------------

    def _explore(self, i: int) -> Action | None:
        active = self.active
        if not self.chose:
            self.chose = True
            while len(active) + len(self.covered) < self.n_needed:
                t = self._choose_target()
                if t is None:
                    break
                active.append(t)
                self.stage[t] = 0
        for t in tuple(active):
            a = self._target_step(t)
            if a is not None:
                return a
        if self.must_submit:  # a careful agent found it cannot afford the next read
            return self._finish(think=self.rng.random() < self.p.deliberation) if i == 0 else None
        if len(active) + len(self.covered) < self.n_needed or not active:
            a = self._navigate()
            if a is not None:
                return a
        if i == 0:
            return self._finish(think=self.rng.random() < self.p.deliberation)
        return None

    def _choose_target(self) -> str | None:
        p = self.p
        rng = self.rng
        if p.wrong_paper_rate and rng.random() < p.wrong_paper_rate:
            w = self._random_other()
            if w is not None:
                return w
        covered = self.covered
        active = self.active
        for g in self.golds:
            if g in self.seen_set and g not in covered and g not in active and g not in self.no_text:
                if rng.random() < p.navigation_skill:
                    return g
                break
        return None

    def _random_other(self) -> str | None:
        """A random seen paper that is not gold and not already dealt with (seed and bridges
        included): the wrong-paper choice."""
        seen = self.seen
        rng = self.rng
        gold = self.gold_set
        for _ in range(4):
            c = seen[rng.randrange(len(seen))]
            if (c not in gold and c not in self.no_text and c not in self.dropped
                    and c not in self.active and c not in self.covered):
                return c
        return None

    def _target_step(self, t: str) -> Action | None:
        """Next call on an active target paper, or None when it must wait for results."""
        if t in self.no_text:
            self._drop(t)
            return None
        pending = self.pending
        p = self.p
        rng = self.rng
        insp = self.inspect.get(t)
        if insp is None:
            insp = self.inspect[t] = rng.random() < p.metadata_loop
        st = self.stage.get(t, 0)
        if insp:
            # metadata loop: get_paper_info -> get_references, then move on without reading
            if st == 0:
                self.stage[t] = 1
                return self._emit(_INFO, {"paper_id": t}, t)
            if (_INFO, t) in pending and p.parallel_calls <= 1.0:
                return None
            if not self._affordable(1):
                self.must_submit = True
                return None
            self.active.remove(t)
            del self.inspect[t]
            self.stage.pop(t, None)
            self.expanded.add(t)
            return self._emit(_REFS, {"paper_id": t}, t)
        if st == 0:
            self.stage[t] = 1
            if t not in self.info_done and rng.random() < 0.2 and self._affordable(1):
                return self._emit(_INFO, {"paper_id": t}, t)
            st = 1
        if st == 1:
            self.stage[t] = 2
            if (t not in self.listed and rng.random() < 0.4 + 0.5 * p.navigation_skill
                    and self._affordable(1 + _READ_COST)):
                return self._emit(_LIST, {"paper_id": t}, t)
            st = 2
        if st == 2:
            if (_READ, t) in pending:
                return None
            if (_LIST, t) in pending and (p.parallel_calls <= 1.0 or rng.random() < 0.5):
                return None  # parallel emitters sometimes read by header while the list is pending
            if not self._affordable(_READ_COST):
                self.must_submit = True
                return None
            self.stage[t] = 3
            return self._read(t)
        return None  # 3: a read is in flight

    def _read(self, t: str) -> Action:
        """A read_section call on ``t``: aims at a labelled section with navigation skill,
        otherwise the longest (read_greed) or a random unread one."""
        p = self.p
        rng = self.rng
        node = self.nodes.get(t)
        paper = self.papers.get(node.arxiv_id) if node is not None and node.arxiv_id else None
        if paper is None or not paper.sections:
            self.planned.pop(t, None)
            return self._emit(_READ, {"paper_id": t, "section": "Introduction"}, t)
        secs = paper.sections
        n = len(secs)
        done = self.reads.get(t, ())
        j = -1
        if t in self.gold_set:
            lab = self._labelled(t)
            for c in lab:
                if c not in done:
                    if rng.random() < p.navigation_skill:
                        j = c
                    break
        if j < 0:
            if len(done) >= n:
                j = rng.randrange(n)
            elif p.read_greed and rng.random() < p.read_greed:
                best = -1
                for c in range(n):
                    if c not in done and len(secs[c].text) > best:
                        best = len(secs[c].text)
                        j = c
            else:
                for _ in range(8):
                    c = rng.randrange(n)
                    if c not in done:
                        j = c
                        break
                else:
                    j = next(c for c in range(n) if c not in done)
        self.planned[t] = j
        if p.bad_section_rate and rng.random() < p.bad_section_rate:
            name = f"Section {n + 2}"  # a section the paper does not have: section_not_found
        elif t in self.listed:
            u = rng.random()
            name = f"({alias(j)})" if u < 0.5 else alias(j) if u < 0.8 else secs[j].header
        else:
            name = secs[j].header
        return self._emit(_READ, {"paper_id": t, "section": name}, t)

    def _labelled(self, g: str) -> tuple[int, ...]:
        """Top-level sections of gold paper ``g`` matched by a direct label (docs/metrics.md#label-resolution)."""
        got = self.labelled.get(g)
        if got is not None:
            return got
        node = self.nodes.get(g)
        arxiv = node.arxiv_id if node is not None else ""
        paper = self.papers.get(arxiv) if arxiv else None
        out: tuple[int, ...] = ()
        if paper is not None:
            acc: set[int] = set()
            for lab in self.labels:
                if lab.relevance == "direct" and lab.arxiv_id == arxiv:
                    acc.update(resolve_label(paper, lab.section)[0])
            out = tuple(sorted(acc))
        self.labelled[g] = out
        return out

    def _drop(self, t: str) -> None:
        if t in self.active:
            self.active.remove(t)
        self.stage.pop(t, None)
        self.inspect.pop(t, None)

    def _parent(self, g: str) -> str | None:
        """The paper whose references list ``g`` on the item's path (seed, else a bridge)."""
        if g in self.parents:
            return self.parents[g]
        edges = self.edges
        seed = self.seed_id
        par: str | None = None
        if g in edges.get(seed, ()):
            par = seed
        else:
            for b in self.item.bridge_paper_ids:
                if g in edges.get(b, ()):
                    par = b
                    break
            else:
                for d1 in edges.get(seed, ()):
                    if g in edges.get(d1, ()):
                        par = d1
                        break
        self.parents[g] = par
        return par

    def _navigate(self) -> Action | None:
        """Find more papers: search, or expand the references of a seen paper."""
        p = self.p
        rng = self.rng
        pending = self.pending
        if not self._affordable(1):
            self.must_submit = True
            return None
        nxt = self.nav_next
        if nxt is not None:
            if (_INFO, nxt) in pending and p.parallel_calls <= 1.0:
                return None
            self.nav_next = None
            self.expanded.add(nxt)
            return self._emit(_REFS, {"paper_id": nxt}, nxt)
        unseen = None
        for g in self.golds:
            if g not in self.seen_set:
                unseen = g
                break
        if (_SEARCH in self.tools and self.searches < 3 and (_SEARCH, "") not in pending
                and rng.random() < p.search_propensity):
            self.searches += 1
            return self._emit(_SEARCH, {"query": self._query(unseen), "top_k": 5})
        x: str | None = None
        if unseen is not None and self.path_known and rng.random() < p.navigation_skill:
            par = self._parent(unseen)
            if par is not None and par not in self.seen_set:
                par = self.seed_id
            if par is not None and par not in self.expanded:
                x = par
        if x is None:
            seen = self.seen
            for _ in range(4):
                c = seen[rng.randrange(len(seen))]
                if c not in self.expanded:
                    x = c
                    break
        if x is None:
            # everything near is expanded: look a seen paper up (recognition happens next turn)
            seen = self.seen
            c = seen[rng.randrange(len(seen))]
            if (_INFO, c) in pending:
                return None
            self.info_done.add(c)
            return self._emit(_INFO, {"paper_id": c}, c)
        if x not in self.info_done and p.metadata_loop and rng.random() < p.metadata_loop:
            self.nav_next = x
            return self._emit(_INFO, {"paper_id": x}, x)
        self.expanded.add(x)
        return self._emit(_REFS, {"paper_id": x}, x)

    def _query(self, unseen: str | None) -> str:
        """Keywords: from the missing gold paper's title (with navigation skill), else the longest
        words of the question."""
        if unseen is not None and self.rng.random() < self.p.navigation_skill:
            node = self.nodes.get(unseen)
            if node is not None and node.title:
                return " ".join(node.title.split()[:6])
        words = sorted(self.item.question.split(), key=len)[-5:]
        return " ".join(w.strip("?,.;:()") for w in words)

    # ------------------------------------------------------------------ results

    def _see(self, pid: str) -> None:
        if pid not in self.seen_set:
            self.seen_set.add(pid)
            self.seen.append(pid)

    def observe(self, name: str, args: dict[str, Any], text: str) -> None:
        """React to the result of one call (the text includes the status footer)."""
        if text.startswith("REJECTED"):
            if text.startswith("REJECTED: Insufficient"):
                # budget gone: most agents submit; a stubborn one tries once more (-> 'budget')
                if self.careful or self.rng.random() < 0.75:
                    self.must_submit = True
            else:
                self.tools.discard(name)
            if name == _READ:
                pid = args.get("paper_id", "")
                if pid in self.active:
                    self.stage[pid] = 2
            return
        self.budget_used += TOOL_COSTS.get(name, 0)
        if name == _READ:
            pid = args.get("paper_id", "")
            if text.startswith("=== "):
                self._on_read(pid, text)
            elif text.startswith("Section '"):
                self.listed.add(pid)  # the error lists the sections: retry by alias
                if pid in self.active:
                    self.stage[pid] = 2
            else:  # no full text / unknown paper
                self.no_text.add(pid)
                self._drop(pid)
                self.dropped.add(pid)
        elif name == _REFS:
            if text.startswith("References for"):
                pid = args.get("paper_id", "")
                for r in self.edges.get(pid, ()):
                    self._see(r)
        elif name == _SEARCH:
            if text.startswith("Search results"):
                for g in self.golds:
                    if g in text:
                        self._see(g)
        elif name == _INFO:
            pid = args.get("paper_id", "")
            if text.startswith("Title:"):
                self.info_done.add(pid)
                if "available: No" in text:
                    self.no_text.add(pid)
            else:
                self.no_text.add(pid)
        elif name == _LIST:
            pid = args.get("paper_id", "")
            if text.startswith("Sections for"):
                self.listed.add(pid)
            else:
                self.no_text.add(pid)

    def _on_read(self, pid: str, text: str) -> None:
        p = self.p
        rng = self.rng
        end = text.find(" ===", 4)
        header = text[4:end] if end > 0 else ""
        node = self.nodes.get(pid)
        paper = self.papers.get(node.arxiv_id) if node is not None and node.arxiv_id else None
        j = self.planned.pop(pid, -1)
        if paper is not None:
            secs = paper.sections
            if not (0 <= j < len(secs) and secs[j].header == header):
                j = next((c for c, s in enumerate(secs) if s.header == header), -1)
        self.reads.setdefault(pid, []).append(j)
        if pid in self.gold_set:
            pass
        elif pid == self.seed_id:
            self.read_seed = True
        else:
            self.read_nongold = True
        if p.deliberation and rng.random() < p.deliberation:
            self.pending_think = True
        if pid not in self.active:
            return
        if pid in self.gold_set:
            lab = self._labelled(pid)
            done = not lab or j in lab or rng.random() >= p.navigation_skill
        elif rng.random() < 0.3 + 0.6 * p.navigation_skill:
            # recognises the wrong paper: looks elsewhere
            self._drop(pid)
            self.dropped.add(pid)
            return
        else:
            done = True  # believes it has what it needs
        if done and p.read_greed and rng.random() < p.read_greed:
            done = False  # read -> read: one more section of the same paper
        if not done:
            self.stage[pid] = 2
            return
        self._drop(pid)
        self.covered.append(pid)
        if len(self.covered) >= self.n_needed and self.post is None:
            self._decide_post()

    def observe_user(self, text: str) -> None:
        if text.startswith("Budget exhausted") or "MUST call submit_answer" in text:
            self.must_submit = True

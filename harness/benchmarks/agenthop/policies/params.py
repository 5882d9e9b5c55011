"""Parameters of a simulated agent policy (docs/simulated_agents.md).

Every field is a habit of the simulated agent, not a property of the benchmark. Probabilities are
per decision (per choice of a paper, per delivered read, per turn), so the observable rates in the
marts come out of the interaction with the item, the caps and the sandbox's answers.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from ....errors import AgentHopError

_PROBABILITIES = (
    "navigation_skill",
    "deliberation",
    "submit_after_gold",
    "extra_reads_after_gold",
    "synthesis_skill",
    "parametric_prior",
    "search_propensity",
    "metadata_loop",
    "read_greed",
    "wrong_paper_rate",
    "empty_response_rate",
    "text_only_rate",
    "bad_section_rate",
)


@dataclass(frozen=True, slots=True)
class PolicyParams:
    #: P(the step toward a gold paper is taken) at each navigation choice: expanding the seed or the
    #: bridge rather than another reference, recognising a gold paper among the seen ones, aiming a
    #: read at a labelled section, building a search query that surfaces the gold paper.
    navigation_skill: float = 0.7
    #: mean number of tool calls the agent wants to emit per turn (1.0 = strictly sequential); the
    #: realised calls/turn is lower when the agent has nothing independent to do in parallel.
    parallel_calls: float = 1.2
    #: P(think after a delivered read) and P(think right before submitting).
    deliberation: float = 0.3
    #: stopping habit at the anchor (the read that completes the agent's evidence): P(the very next
    #: call is submit_answer).
    submit_after_gold: float = 0.5
    #: stopping habit otherwise: P(one more read after the anchor), repeated (geometric), then
    #: think/submit. Agents with this or ``read_greed`` >= 0.5 do not check their remaining budget.
    extra_reads_after_gold: float = 0.2
    #: P(correct) when reads of labelled sections of every gold paper were delivered.
    synthesis_skill: float = 0.8
    #: P(correct) without any evidence (closed book, or nothing useful read); >= 0.25 (chance).
    parametric_prior: float = 0.35
    #: mean completion tokens per turn (reasoning included); about 30% of it stays in the history.
    verbosity: int = 600
    #: P(search_papers instead of get_references when the agent needs to find papers).
    search_propensity: float = 0.2
    #: P(a paper the agent takes up is inspected with get_paper_info -> get_references and left
    #: unread) - 1.0 means it never reads.
    metadata_loop: float = 0.1
    #: P(read another section right after a delivered read) and preference for the longest sections.
    read_greed: float = 0.1
    #: P(a paper choice goes to a non-gold paper - the seed, a bridge or another reference).
    wrong_paper_rate: float = 0.1
    #: turn (0-based) at which an agent still without its evidence gives up and guesses (+-3 noise);
    #: values at or above the turn cap let it run into max_turns.
    patience: int = 16
    #: rare failure modes: P(empty response) and P(text-only turn) per turn, P(invalid section name)
    #: per read.
    #: An empty response ends the attempt with ``error`` (a simulated transient failure), which a
    #: resumed run retries; it is off unless a panel entry asks for it, so a rerun of an offline panel
    #: reproduces it row for row (panels/paper19.yaml asks for 0.003).
    empty_response_rate: float = 0.0
    text_only_rate: float = 0.01
    bad_section_rate: float = 0.03

    def __post_init__(self) -> None:
        for name in _PROBABILITIES:
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.0 <= v <= 1.0:
                raise AgentHopError(f"policy parameter {name}: expected a number in [0, 1], got {v!r}")
        if self.parametric_prior < 0.25:
            raise AgentHopError(
                f"policy parameter parametric_prior: must be >= 0.25 (chance on four options), "
                f"got {self.parametric_prior!r}"
            )
        pc = self.parallel_calls
        if isinstance(pc, bool) or not isinstance(pc, (int, float)) or not 1.0 <= pc <= 6.0:
            raise AgentHopError(f"policy parameter parallel_calls: expected a number in [1, 6], got {pc!r}")
        for name, lo, hi in (("verbosity", 1, 50_000), ("patience", 1, 100)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
                raise AgentHopError(f"policy parameter {name}: expected an integer in [{lo}, {hi}], got {v!r}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


PARAM_NAMES: tuple[str, ...] = tuple(f.name for f in fields(PolicyParams))

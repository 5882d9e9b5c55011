"""Deterministic synthetic AgentHop release (docs/benchmark.md#synthetic-generator), in the release format of docs/benchmark.md#release-format.

Decisions (also in docs/benchmark.md):

- One global *universe* of papers, split into topics of ``TOPIC_SIZE`` papers (one topic per
  ``ITEMS_PER_TOPIC`` items, each topic drawn from a research area of ``vocab.AREAS``). Every paper
  has a publication time, a year (2008-2025, growing volume), a popularity weight and one fixed
  reference list (S2 order) drawn from older papers, mostly of its own topic, by popularity.
  A paper's references are the same in every item that contains it.
- About ``P_FULL_TEXT`` of the papers have full text; the rest are metadata-only, either without an
  arXiv id (``""``) or with an arXiv id that is not in the pool (both occur in the real release).
- Item neighbourhood exactly as package_release.py builds it: seed, its first 30 references (depth 1),
  the first 30 references of each depth-1 paper (depth 2), deduplicated, insertion order seed, d1, d2;
  only the seed and depth-1 papers get ``edges`` entries. The pool is the set of full-text papers that
  occur in some neighbourhood.
- Seeds are full-text papers from 2022-2025; golds and bridges are full-text; a depth-1 gold is cited by
  the seed, a depth-2 gold is cited by a full-text bridge that the seed cites and is not cited by the
  seed itself.
- Each item plants one fact sentence per gold inside the gold's labelled section (after the labelled
  subsection title when the direct label names a subsection), so the correct option is supported by
  the text an agent can read.
- All randomness comes from ``random.Random(seed)`` (sub-streams seeded from it); nothing iterates a
  set or depends on hashing, so the same seed gives byte-identical files.
"""

from __future__ import annotations

import bisect
import json
import math
import random
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from . import vocab
from .labels import norm_label
from .loader import RELEASE_FILES

FULL_SCALE_ITEMS = 1011
CELL_COUNTS: dict[str, int] = {"st_d1": 90, "st_d2": 478, "mt_d1": 396, "mt_d2": 47}
REASONING_COUNTS: dict[str, int] = {"GROUND": 330, "RESULT": 292, "MOTIVE": 265, "METHOD": 124}
TIER_SHARES: dict[str, int] = {"gold": 46, "silver": 34, "bronze": 20}

MAX_REFS = 30
ITEMS_PER_TOPIC = 20
TOPIC_SIZE = 500
P_FULL_TEXT = 0.35
P_SAME_TOPIC = 0.85
MEAN_REFS_FULL_TEXT = 30.0
MEAN_REFS_METADATA = 22.0
P_METADATA_NO_REFS = 0.35
YEARS = tuple(range(2008, 2026))
SEED_YEARS = (2022, 2023, 2024, 2025)

#: marker written into README.md; make-benchmark only overwrites directories that carry it
SYNTHETIC_MARKER = "<!-- agenthop-synthetic-release -->"

_SMALL_WORDS = frozenset({"a", "an", "and", "for", "in", "of", "on", "the", "to", "via", "with", "by"})
_SYLLABLES = ("Re", "Fu", "Sion", "Tra", "Co", "Mo", "Lex", "Ra", "Ve", "Dia", "Ne", "Pro", "Gra", "Hy",
              "Sta", "Lu", "Mi", "Qua", "Tor", "Zen", "Al", "Kai", "Or", "Pi")


# --------------------------------------------------------------------------------------------------
# counts


def scale_counts(counts: dict[str, int], n: int, *, min_one: bool = True) -> dict[str, int]:
    """Scale ``counts`` to total ``n`` by largest remainder (ties: dict order).

    With ``min_one`` and ``n >= len(counts)`` every key gets at least one (taken from the largest).
    """
    if n < 0:
        raise ValueError("n must be >= 0")
    total = sum(counts.values())
    keys = list(counts)
    quotas = [counts[k] * n / total for k in keys]
    out = [math.floor(q) for q in quotas]
    order = sorted(range(len(keys)), key=lambda i: (-(quotas[i] - out[i]), i))
    for i in order[: n - sum(out)]:
        out[i] += 1
    if min_one and n >= len(keys):
        for i in range(len(keys)):
            if out[i] == 0:
                j = max(range(len(keys)), key=lambda m: (out[m], -m))
                out[j] -= 1
                out[i] = 1
    return dict(zip(keys, out, strict=True))


def _interleaved(counts: dict[str, int]) -> list[str]:
    """Keys laid out so that every prefix has about the overall proportions (stratified order)."""
    slots = [((k + 0.5) / c, ci, key) for ci, (key, c) in enumerate(counts.items()) for k in range(c)]
    slots.sort()
    return [s[2] for s in slots]


def _shuffled(counts: dict[str, int], rng: random.Random) -> list[str]:
    out = [key for key, c in counts.items() for _ in range(c)]
    rng.shuffle(out)
    return out


# --------------------------------------------------------------------------------------------------
# universe


@dataclass(slots=True)
class _UPaper:
    idx: int
    pid: str
    topic: int
    time: float
    year: int
    ft: bool
    arxiv: str
    weight: float
    refs: list[int] = field(default_factory=list)
    # filled lazily for papers that appear in some neighbourhood
    title: str = ""
    abstract: str = ""
    authors: tuple[str, ...] = ()
    task: str = ""
    method: str = ""
    dataset: str = ""
    metric: str = ""
    acro: str = ""
    node_json: str = ""


@dataclass(slots=True)
class _Universe:
    papers: list[_UPaper]
    topics: list[list[int]]  # per topic, paper indices sorted by time
    full_text: list[bool]  # per paper index


def _hex_id(rng: random.Random, taken: set[str]) -> str:
    while True:
        pid = f"{rng.getrandbits(160):040x}"
        if pid not in taken:
            taken.add(pid)
            return pid


def _arxiv_id(rng: random.Random, year: int, taken: set[str]) -> str:
    while True:
        month = rng.randint(1, 12)
        yymm = f"{year % 100:02d}{month:02d}"
        num = f"{rng.randint(1, 9999):04d}" if year < 2015 else f"{rng.randint(1, 24999):05d}"
        aid = f"{yymm}.{num}"
        if aid not in taken:
            taken.add(aid)
            return aid


def _build_universe(n_topics: int, rng: random.Random) -> _Universe:
    year_weights = [1.22**i for i in range(len(YEARS))]
    papers: list[_UPaper] = []
    topics: list[list[int]] = [[] for _ in range(n_topics)]
    pids: set[str] = set()
    arxivs: set[str] = set()
    for t in range(n_topics):
        years = rng.choices(YEARS, year_weights, k=TOPIC_SIZE)
        for year in years:
            ft = rng.random() < P_FULL_TEXT
            if ft:
                arxiv = _arxiv_id(rng, year, arxivs)
            else:
                arxiv = _arxiv_id(rng, year, arxivs) if rng.random() < 0.45 else ""
            weight = rng.paretovariate(1.3) * (1.6 if ft else 1.0)
            p = _UPaper(len(papers), _hex_id(rng, pids), t, year + rng.random(), year, ft, arxiv, weight)
            papers.append(p)
            topics[t].append(p.idx)
    times: list[list[float]] = []
    cums: list[list[float]] = []
    for t in range(n_topics):
        topics[t].sort(key=lambda i: papers[i].time)
        times.append([papers[i].time for i in topics[t]])
        acc = 0.0
        cum = []
        for i in topics[t]:
            acc += papers[i].weight
            cum.append(acc)
        cums.append(cum)

    rand = rng.random
    for p in papers:
        if p.ft:
            n = max(0, int(rng.gauss(MEAN_REFS_FULL_TEXT, 12)))
        else:
            n = 0 if rand() < P_METADATA_NO_REFS else max(0, int(rng.gauss(MEAN_REFS_METADATA, 12)))
        refs: list[int] = []
        seen: set[int] = set()
        for _ in range(2 * n):
            if len(refs) >= n:
                break
            t = p.topic if (n_topics == 1 or rand() < P_SAME_TOPIC) else rng.randrange(n_topics)
            k = bisect.bisect_left(times[t], p.time)
            if k == 0:
                continue
            cum = cums[t]
            j = topics[t][bisect.bisect_right(cum, rand() * cum[k - 1], 0, k - 1)]
            if j not in seen:
                seen.add(j)
                refs.append(j)
        p.refs = refs
    return _Universe(papers, topics, [p.ft for p in papers])


def _title_case(phrase: str) -> str:
    words = phrase.split(" ")
    out = []
    for i, w in enumerate(words):
        if i and w in _SMALL_WORDS:
            out.append(w)
        elif "-" in w:
            out.append("-".join(x[:1].upper() + x[1:] for x in w.split("-")))
        else:
            out.append(w[:1].upper() + w[1:])
    return " ".join(out)


def _describe_paper(p: _UPaper, rng: random.Random, titles: set[str]) -> None:
    """Title, abstract, authors and node JSON of a universe paper (topical vocabulary)."""
    area = vocab.AREAS[p.topic % len(vocab.AREAS)]
    p.task = rng.choice(area.tasks)
    p.method = rng.choice(area.methods)
    p.dataset = rng.choice(area.datasets)
    p.metric = rng.choice(area.metrics)
    p.acro = "".join(rng.sample(_SYLLABLES, 2)) + rng.choice(("", "", "Net", "-2", "X", "LM"))
    adj = rng.choice(vocab.ADJECTIVES)
    for attempt in range(50):
        pattern = rng.choice(vocab.TITLE_PATTERNS)
        title = pattern.format(adj=adj, method=_title_case(p.method), task=_title_case(p.task), acro=p.acro)
        if attempt >= 5:
            title = f"{title} ({p.acro})" if attempt < 25 else f"{title} {attempt}"
        if title not in titles:
            titles.add(title)
            break
        adj = rng.choice(vocab.ADJECTIVES)
        p.acro = "".join(rng.sample(_SYLLABLES, 2)) + rng.choice(("", "Net", "-2", "X", "LM", "++"))
    p.title = title
    if not p.ft and rng.random() < 0.15:
        p.abstract = ""
    else:
        parts = [
            f"{p.task[:1].upper()}{p.task[1:]} remains challenging because {rng.choice(vocab.CHALLENGES)}.",
            f"We propose {p.acro}, a {adj.lower()} {p.method} that {rng.choice(vocab.VERBS)} "
            f"{rng.choice(vocab.OBJECTS)}.",
            f"Experiments on {p.dataset} show consistent gains in {p.metric} over strong baselines.",
        ]
        if rng.random() < 0.6:
            w1, w2 = rng.sample(area.words, 2)
            parts.insert(1, f"Prior work treats the {w1} and the {w2} independently, which limits accuracy.")
        if rng.random() < 0.4:
            parts.append(f"Our analysis further shows why the {rng.choice(area.words)} matters for {p.task}.")
        p.abstract = " ".join(parts)
    n_auth = rng.choice((1, 2, 2, 3, 3, 4, 4, 5, 6))
    p.authors = tuple(f"{rng.choice(vocab.FIRST_NAMES)} {rng.choice(vocab.LAST_NAMES)}" for _ in range(n_auth))
    year: int | None = p.year
    if not p.ft and rng.random() < 0.02:
        year = None
    node = {
        "title": p.title,
        "arxivId": p.arxiv,
        "year": year,
        "abstract": p.abstract,
        "authors": [{"name": a} for a in p.authors],
    }
    p.node_json = json.dumps(node, ensure_ascii=False)


# --------------------------------------------------------------------------------------------------
# items: structure


@dataclass(slots=True)
class _Item:
    sid: str
    cell: str
    reasoning: str
    topic: int
    seed: int = -1
    golds: list[int] = field(default_factory=list)
    bridges: list[int] = field(default_factory=list)  # one per gold for depth 2 (may repeat)
    nodes: dict[int, int] = field(default_factory=dict)  # paper index -> depth, insertion order
    edges: dict[int, list[int]] = field(default_factory=dict)


def _refs30(u: _Universe, i: int) -> list[int]:
    return u.papers[i].refs[:MAX_REFS]


def _neighbourhood(u: _Universe, seed: int) -> tuple[dict[int, int], dict[int, list[int]]]:
    nodes = {seed: 0}
    edges = {seed: _refs30(u, seed)}
    for j in edges[seed]:
        nodes.setdefault(j, 1)
    for j in edges[seed]:
        refs = _refs30(u, j)
        edges[j] = refs
        for k in refs:
            nodes.setdefault(k, 2)
    return nodes, edges


def _choose_targets(u: _Universe, item: _Item, seed: int, rng: random.Random) -> bool:
    """Pick golds (and bridges) for ``item`` from ``seed``'s neighbourhood; False if impossible."""
    ft = u.full_text
    topic = u.papers[seed].topic
    d1 = _refs30(u, seed)
    d1_ft = [j for j in d1 if ft[j]]
    on_topic = [j for j in d1_ft if u.papers[j].topic == topic]
    n_gold = 2 if item.cell.startswith("mt") else 1
    if item.cell.endswith("d1"):
        if len(d1_ft) < n_gold:
            return False
        item.golds = rng.sample(on_topic if len(on_topic) >= n_gold else d1_ft, n_gold)
        item.bridges = []
        return True
    d1_set = set(d1)
    paths: list[tuple[int, int]] = []  # (bridge, gold)
    for b in d1_ft:
        for g in _refs30(u, b):
            if ft[g] and g not in d1_set and g != seed:
                paths.append((b, g))
    if not paths:
        return False
    # golds on the seed's topic when possible (the question's vocabulary then matches the seed's field)
    paths = [bg for bg in paths if u.papers[bg[1]].topic == topic] or paths
    b, g = rng.choice(paths)
    item.golds, item.bridges = [g], [b]
    if n_gold == 2:
        same = [(b2, g2) for b2, g2 in paths if b2 == b and g2 != g]
        other = [(b2, g2) for b2, g2 in paths if b2 != b and g2 != g]
        pool = same if (same and (rng.random() < 0.5 or not other)) else other
        if not pool:
            return False
        b2, g2 = rng.choice(pool)
        item.golds.append(g2)
        item.bridges.append(b2)
    return True


def _place_items(u: _Universe, items: list[_Item], rng: random.Random) -> None:
    seeds_by_topic: list[list[int]] = []
    for t, members in enumerate(u.topics):
        cands = [i for i in members if u.papers[i].ft and u.papers[i].year >= SEED_YEARS[0]
                 and len(u.papers[i].refs) >= 10]
        rng.shuffle(cands)
        seeds_by_topic.append(cands)
    used: dict[int, int] = {}
    for item in items:
        cands = seeds_by_topic[item.topic]
        # prefer seeds not used yet, then the least used ones
        order = sorted(range(len(cands)), key=lambda k: (used.get(cands[k], 0), k))
        for k in order:
            seed = cands[k]
            if _choose_targets(u, item, seed, rng):
                break
        else:
            raise RuntimeError(f"no seed in topic {item.topic} supports cell {item.cell}")
        item.seed = seed
        used[seed] = used.get(seed, 0) + 1
        item.nodes, item.edges = _neighbourhood(u, seed)


# --------------------------------------------------------------------------------------------------
# papers: skeletons and text


@dataclass(slots=True)
class _Sec:
    header: str
    kind: str  # intro/related/background/method/setup/experiments/analysis/discussion/limitations/conclusion/appendix
    length: int
    subs: list[str] = field(default_factory=list)  # embedded subsection titles, with numbering
    facts: list[tuple[int, str]] = field(default_factory=list)  # (subsection index or -1, sentence)


@dataclass(slots=True)
class _Skeleton:
    style: str
    sections: list[_Sec]


_METHOD_HEADERS = ("Method", "Methods", "Approach", "Our Approach", "Proposed Method", "Methodology", "Model")
_EXPERIMENT_HEADERS = ("Experiments", "Experimental Results", "Evaluation", "Experiments and Results")
_OPTIONAL = (
    ("related", ("Related Work", "Background and Related Work", "Prior Work")),
    ("background", ("Preliminaries", "Background", "Problem Setup", "Problem Formulation")),
    ("setup", ("Experimental Setup", "Setup", "Datasets and Baselines")),
    ("analysis", ("Analysis", "Ablation Studies", "Further Analysis")),
    ("discussion", ("Discussion",)),
    ("limitations", ("Limitations",)),
)
_CONCLUSION_HEADERS = ("Conclusion", "Conclusions", "Conclusion and Future Work")
_SUB_PROB = {"method": 0.9, "experiments": 0.85, "setup": 0.5, "related": 0.4, "background": 0.4,
             "analysis": 0.5, "appendix": 0.3}
_SUBSECTION_NORMS = tuple((s, norm_label(s)) for s in vocab.SUBSECTION_TITLES)
_ROMAN = ("I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII", "XIII", "XIV", "XV")


def _section_length(rng: random.Random) -> int:
    # log-normal, median ~900, mean ~1,500, rare sections of 20k-60k characters
    return int(min(60_000, max(200.0, rng.lognormvariate(6.40, 1.25))))


def _skeleton(rng: random.Random) -> _Skeleton:
    n_sec = rng.choices(range(5, 16), (4, 8, 12, 14, 14, 12, 10, 8, 7, 6, 5))[0]
    n_apdx = min(n_sec - 4, rng.choices((0, 1, 2, 3, 4), (30, 25, 20, 15, 10))[0])
    n_opt = n_sec - 4 - n_apdx
    optional = list(_OPTIONAL)
    chosen: list[tuple[str, str]] = []
    while n_opt > 0:
        if optional:
            kind, names = optional.pop(rng.randrange(len(optional)))
            chosen.append((kind, rng.choice(names)))
        else:  # more body sections than optional kinds: additional experiment sections
            chosen.append(("experiments", f"{rng.choice(('Results on', 'Experiments on', 'Study of'))} "
                                          f"{rng.choice(vocab.SUBSECTION_TITLES)}"))
        n_opt -= 1
    order = {"related": 1, "background": 2, "setup": 4, "analysis": 6, "discussion": 7, "limitations": 8}
    body: list[tuple[str, str]] = [("intro", "Introduction"), ("method", rng.choice(_METHOD_HEADERS)),
                                   ("experiments", rng.choice(_EXPERIMENT_HEADERS))]
    body += chosen
    rank = {"intro": 0, "method": 3, "experiments": 5}
    body.sort(key=lambda kv: rank.get(kv[0], order.get(kv[0], 5)))
    body.append(("conclusion", rng.choice(_CONCLUSION_HEADERS)))
    style = rng.choices(("clean", "numbered", "dotted", "roman", "mixed"), (70, 17, 5, 3, 5))[0]
    sections: list[_Sec] = []
    seen_norm: set[str] = set()
    for num, (kind, name) in enumerate(body, start=1):
        if style == "numbered":
            header = f"{num} {name}"
        elif style == "dotted":
            header = f"{num}. {name}"
        elif style == "roman":
            header = f"{_ROMAN[num - 1]} {name}"
        elif style == "mixed" and kind in ("method", "experiments", "setup") and rng.random() < 0.7:
            header = f"{num}.{rng.randint(1, 3)} {name}"
        else:
            header = name
        if norm_label(header) in seen_norm:
            header = f"{header} (continued)"
        seen_norm.add(norm_label(header))
        sections.append(_Sec(header, kind, _section_length(rng)))
    letters = "ABCDEFGH"
    k = 0
    apdx_titles = list(vocab.APPENDIX_TITLES)
    rng.shuffle(apdx_titles)
    for a in range(n_apdx):
        title = apdx_titles[a]
        form = rng.random()
        if a > 0 and form < 0.2:
            header = f"Apdx_{letters[k - 1]}.{rng.randint(1, 3)}: {title}"
        elif form > 0.95:
            header = f"Apdx_{letters[k]}"
            k += 1
        else:
            header = f"Apdx_{letters[k]}: {title}"
            k += 1
        sections.append(_Sec(header, "appendix", _section_length(rng)))
    # embedded subsection titles, unique within the paper and never equal to a header
    sub_pool = [s for s, n in _SUBSECTION_NORMS if n not in seen_norm]
    rng.shuffle(sub_pool)
    for num, sec in enumerate(sections, start=1):
        p = _SUB_PROB.get(sec.kind, 0.15)
        if sub_pool and rng.random() < p:
            n_sub = min(len(sub_pool), rng.choice((1, 2, 2, 3, 3, 4)))
            prefix = str(num) if sec.kind != "appendix" else sec.header[5:6]
            sec.subs = [f"{prefix}.{m} {sub_pool.pop()}" for m in range(1, n_sub + 1)]
            sec.length = max(sec.length, 220 * (n_sub + 1))
    return _Skeleton(style, sections)


def _sentence_banks(rng: random.Random) -> list[list[str]]:
    """Per area a bank of sentences (area sentences plus the general ones), built once per release."""
    banks: list[list[str]] = []
    for area in vocab.AREAS:
        bank = list(vocab.GENERAL_SENTENCES)
        for _ in range(160):
            w1, w2 = rng.sample(area.words, 2)
            bank.append(rng.choice(vocab.SENTENCE_TEMPLATES).format(
                method=rng.choice(area.methods), task=rng.choice(area.tasks), dataset=rng.choice(area.datasets),
                metric=rng.choice(area.metrics), word1=w1, word2=w2))
        bank.append("The objective is ℒ = −∑ log p(y | x; θ), minimised with Adam (β₁ = 0.9).")
        bank.append("Gains are significant (p < 0.01) and hold for inputs of length ≥ 512 tokens.")
        banks.append(bank)
    return banks


def _render_text(sec: _Sec, bank: list[str], avg_len: float, rng: random.Random) -> str:
    n = max(2, round(sec.length / avg_len))
    sentences = rng.choices(bank, k=n)
    facts_top = [f for s, f in sec.facts if s < 0]
    if not sec.subs:
        for f in facts_top:
            sentences.insert(rng.randint(1, len(sentences)), f)
        return " ".join(sentences)
    chunks = len(sec.subs) + 1
    size = max(1, len(sentences) // chunks)
    parts: list[str] = []
    for c in range(chunks):
        chunk = sentences[c * size:(c + 1) * size] if c < chunks - 1 else sentences[c * size:]
        if c == 0:
            for f in facts_top:
                chunk.insert(rng.randint(0, len(chunk)), f)
        else:
            parts.append(sec.subs[c - 1])
            facts = [f for s, f in sec.facts if s == c - 1]
            chunk = facts + chunk
        parts.extend(chunk)
    return " ".join(parts)


# --------------------------------------------------------------------------------------------------
# items: content (question, options, labels, analysis)

_DIRECT_KINDS: dict[str, tuple[str, ...]] = {
    "RESULT": ("experiments", "analysis", "setup"),
    "METHOD": ("method", "background"),
    "MOTIVE": ("intro", "related", "discussion"),
    "GROUND": ("setup", "experiments", "method", "related"),
}


def _fact(reasoning: str, p: _UPaper, rng: random.Random) -> tuple[str, str]:
    """(sentence planted in the paper, option text stating it)."""
    area = vocab.AREAS[p.topic % len(vocab.AREAS)]
    if reasoning == "RESULT":
        gain = round(rng.uniform(0.6, 9.5), 1)
        return (f"On {p.dataset}, {p.acro} improves {p.metric} by {gain} points over the strongest baseline.",
                f"it improves {p.metric} on {p.dataset} by {gain} points over the strongest baseline")
    if reasoning == "METHOD":
        verb, obj = rng.choice(vocab.VERBS), rng.choice(vocab.OBJECTS)
        w = rng.choice(area.words)
        return (f"Concretely, {p.acro} {verb} {obj} by conditioning the {p.method} on each {w}.",
                f"it {verb} {obj} by conditioning a {p.method} on each {w}")
    if reasoning == "MOTIVE":
        w1, w2 = rng.sample(area.words, 2)
        reason = rng.choice(vocab.REASONS).format(w1=w1, w2=w2)
        return (f"Our motivation is the observation that {reason}.", f"because {reason}")
    w = rng.choice(area.words)
    return (f"We ground every claim in the {p.dataset} benchmark and report {p.metric} per {w} group.",
            f"it grounds its evaluation in {p.dataset}, reporting {p.metric} per {w} group")


def _distractor(kind: str, reasoning: str, other: _UPaper, rng: random.Random) -> str:
    area = vocab.AREAS[other.topic % len(vocab.AREAS)]
    if kind == "no_context":
        w1, w2 = rng.sample(area.words, 2)
        return rng.choice((
            f"it removes the need for any {w1} supervision by relying on {w2} heuristics",
            f"it reports no measurable change in {other.metric} once the {w1} is controlled for",
            f"because larger models make explicit {w1} modelling unnecessary",
            f"it evaluates only on synthetic {w2} data without a public benchmark",
        ))
    return _fact(reasoning, other, rng)[1]


@dataclass(slots=True)
class _LabelSpec:
    paper: int
    section: str
    relevance: str
    contains: str
    arxiv_override: str | None = None
    missing: bool = False  # names a section the paper does not have
    extra: dict[str, str] = field(default_factory=dict)


def _gold_names(a: _UPaper, b: _UPaper) -> tuple[str, str]:
    """How an MT question refers to its two golds: by task, else by method, else by dataset."""
    for x, y in ((a.task, b.task), (a.method, b.method), (a.dataset, b.dataset)):
        if x != y:
            return x, y
    return f"{a.task} (first)", f"{b.task} (second)"


def _sentence(clause: str) -> str:
    return clause[:1].upper() + clause[1:] + "."


def _header_label(header: str, num: int, rng: random.Random) -> str:
    """How an auditor writes a header: as-is, other case, or with/without numbering."""
    base = norm_label(header)
    r = rng.random()
    if r < 0.55:
        return header
    if r < 0.7:
        return header.upper() if rng.random() < 0.3 else header.lower()
    if r < 0.9 and base == header.lower():
        return f"{num} {header}"  # "3 Method" for header "Method"
    return _title_case(base) if base else header


class _Content:
    """Writes question, options, labels and analysis of each item; plants facts into skeletons."""

    def __init__(self, u: _Universe, skeletons: dict[int, _Skeleton], rng: random.Random) -> None:
        self.u = u
        self.sk = skeletons
        self.rng = rng

    def _pick_section(self, paper: int, reasoning: str) -> tuple[int, int]:
        """(section index, subsection index or -1) of a body section suited to the reasoning type."""
        secs = self.sk[paper].sections
        kinds = _DIRECT_KINDS[reasoning]
        cands = [i for i, s in enumerate(secs) if s.kind in kinds] or [
            i for i, s in enumerate(secs) if s.kind != "appendix"]
        i = self.rng.choice(cands)
        sub = self.rng.randrange(len(secs[i].subs)) if secs[i].subs and self.rng.random() < 0.45 else -1
        return i, sub

    def _label_text(self, paper: int, i: int, sub: int) -> str:
        sec = self.sk[paper].sections[i]
        if sub >= 0:
            title = sec.subs[sub]
            return title if self.rng.random() < 0.5 else title.split(" ", 1)[1]
        return _header_label(sec.header, i + 1, self.rng)

    def item(self, it: _Item, correct_index: int) -> tuple[str, list[str], list[str], list[_LabelSpec], list[dict]]:
        rng, P = self.rng, self.u.papers
        seed = P[it.seed]
        labels: list[_LabelSpec] = []
        claims: list[dict] = []
        gold_opts: list[str] = []
        for g in it.golds:
            gp = P[g]
            i, sub = self._pick_section(g, it.reasoning)
            sentence, option = _fact(it.reasoning, gp, rng)
            self.sk[g].sections[i].facts.append((sub, sentence))
            label = self._label_text(g, i, sub)
            labels.append(_LabelSpec(g, label, "direct", f"States that {option}."))
            claims.append({"claim": sentence, "source_paper": gp.title, "source_section": label,
                           "verbatim_match": rng.random() < 0.8, "verified": True, "note": ""})
            gold_opts.append(option)
            if rng.random() < 0.25:  # a second direct label: the header of the same section
                labels.append(_LabelSpec(g, _header_label(self.sk[g].sections[i].header, i + 1, rng), "direct",
                                         "Section containing the claim."))
            if rng.random() < 0.55:
                j, sub2 = self._pick_section(g, rng.choice(list(_DIRECT_KINDS)))
                labels.append(_LabelSpec(g, self._label_text(g, j, sub2), "supporting",
                                         f"Context on {gp.task}."))
        for b in dict.fromkeys(it.bridges):
            if rng.random() < 0.8:
                j, sub = self._pick_section(b, "METHOD")
                labels.append(_LabelSpec(b, self._label_text(b, j, sub), "supporting",
                                         f"Explains how the bridge paper uses {P[b].method}."))
        if rng.random() < 0.7:
            j, sub = self._pick_section(it.seed, "MOTIVE")
            labels.append(_LabelSpec(it.seed, self._label_text(it.seed, j, sub),
                                     "supporting" if rng.random() < 0.85 else "direct",
                                     "Seed context that motivates the question."))
        # a few labels that resolve to nothing (empty arxiv_id or a section the paper does not have)
        r = rng.random()
        if r < 0.07:
            g = rng.choice(it.golds)
            labels.append(_LabelSpec(g, self._label_text(g, *self._pick_section(g, it.reasoning)), "supporting",
                                     "Label without an arXiv id.", arxiv_override=""))
        elif r < 0.16:
            g = rng.choice(it.golds)
            missing = rng.choice(("Appendix C: Extended Proofs", "Broader Impact Discussion",
                                  "Supplementary Experiments", "Appendix D"))
            labels.append(_LabelSpec(g, missing, "supporting", "Section named by the auditor.", missing=True))
        if labels and rng.random() < 0.05:
            labels[-1].extra["_repointed_from"] = "Introduction"
        if rng.random() < 0.04:
            for lab in labels:
                if lab.relevance == "supporting" and lab.paper in it.golds:
                    lab.extra["_demoted_from"] = "direct"
                    break

        # question: topical words of the gold abstract, never the gold title
        gp = P[it.golds[0]]
        stem = {
            "RESULT": f"what result does the cited work on {gp.task} report for {gp.metric}?",
            "METHOD": f"how does the cited work on {gp.task} design its {gp.method.split()[-1]}?",
            "MOTIVE": f"why does the cited work on {gp.task} depart from earlier designs?",
            "GROUND": f"on which evaluation does the cited work on {gp.task} ground its claims?",
        }[it.reasoning]
        if it.cell == "st_d1":
            q = f"The seed paper cites a study of {gp.task}. Based on that study, {stem}"
        elif it.cell == "st_d2":
            bp = P[it.bridges[0]]
            q = (f"The seed paper builds on work using a {bp.method}, which in turn cites a study of {gp.task}. "
                 f"Based on that study, {stem}")
        else:
            gp2 = P[it.golds[1]]
            n1, n2 = _gold_names(gp, gp2)
            via = "through intermediate papers" if it.cell == "mt_d2" else "directly"
            on = gp.dataset if gp.dataset == gp2.dataset else f"{gp.dataset} and {gp2.dataset}"
            q = (f"Two papers reached {via} from the seed study {n1} and {n2}. "
                 f"Considering both, which statement about their findings on {on} holds?")
        for g in it.golds:
            if P[g].title.lower() in q.lower():
                q = q.replace(P[g].task, "the problem it studies")

        # options
        if len(gold_opts) == 1:
            correct = _sentence(gold_opts[0])
        else:
            t1, t2 = _gold_names(P[it.golds[0]], P[it.golds[1]])
            correct = f"For {t1}, {gold_opts[0]}; for {t2}, {gold_opts[1]}."
        others = [P[n] for n, d in it.nodes.items() if d and n not in it.golds]
        kinds = [rng.choice(("seed_only", "wrong_paper", "no_context")) for _ in range(3)]
        distractors: list[str] = []
        for kind in kinds:
            text = correct
            for _ in range(20):
                src = seed if kind == "seed_only" or not others else rng.choice(others)
                wrong = _distractor(kind, it.reasoning, src, rng)
                if len(gold_opts) == 2:
                    if rng.random() < 0.5:  # one half right, one half wrong
                        halves = [gold_opts[0], wrong] if rng.random() < 0.5 else [wrong, gold_opts[1]]
                    else:
                        other = seed if not others else rng.choice(others)
                        halves = [wrong, _distractor("wrong_paper", it.reasoning, other, rng)]
                    text = f"For {t1}, {halves[0]}; for {t2}, {halves[1]}."
                else:
                    text = _sentence(wrong)
                if text != correct and text not in distractors:
                    break
            distractors.append(text)
        options = list(distractors)
        options.insert(correct_index, correct)
        dtypes = list(kinds)
        dtypes.insert(correct_index, "correct")
        return q, options, dtypes, labels, claims


# --------------------------------------------------------------------------------------------------
# writing


def _dump(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class GeneratedRelease:
    """Counts of a release written by :func:`write_release`."""

    items: int
    cells: dict[str, int]
    papers: int
    nodes: int
    edges: int


def make_benchmark(out_dir: str | Path, n_items: int = FULL_SCALE_ITEMS, seed: int = 0) -> None:
    """Write a synthetic release with ``n_items`` items to ``out_dir`` (deterministic in ``seed``)."""
    write_release(out_dir, n_items, seed)


def write_release(out_dir: str | Path, n_items: int = FULL_SCALE_ITEMS, seed: int = 0) -> GeneratedRelease:
    """:func:`make_benchmark`, returning the counts it wrote.

    Files are written under temporary names and renamed at the end, so an interrupted run never
    leaves a half-written file under a release name.
    """
    if n_items < 1:
        raise ValueError("n_items must be >= 1")
    master = random.Random(seed)
    sub = [random.Random(master.getrandbits(64)) for _ in range(6)]
    rng_u, rng_items, rng_meta, rng_sk, rng_content, rng_text = sub

    cells = scale_counts(CELL_COUNTS, n_items, min_one=True)
    reasoning = _shuffled(scale_counts(REASONING_COUNTS, n_items, min_one=True), rng_items)
    tiers = _shuffled(scale_counts(TIER_SHARES, n_items, min_one=True), rng_items)
    correct_idx = [i % 4 for i in range(n_items)]
    rng_items.shuffle(correct_idx)

    n_topics = max(1, round(n_items / ITEMS_PER_TOPIC))
    universe = _build_universe(n_topics, rng_u)
    P = universe.papers

    # ids in file order: ST and MT numbered separately, with gaps (items retired in triage)
    order = _interleaved(cells)
    counters = {"st": 0, "mt": 0}
    items: list[_Item] = []
    for k, cell in enumerate(order):
        kind = cell[:2]
        counters[kind] += 1 + (1 if rng_items.random() < 0.12 else 0)
        items.append(_Item(f"{kind}_{counters[kind]:04d}", cell, reasoning[k], k % n_topics))
    _place_items(universe, items, rng_items)

    # describe every paper that occurs in a neighbourhood (in first-occurrence order)
    titles: set[str] = set()
    used: dict[int, None] = {}
    for it in items:
        for n in it.nodes:
            if n not in used:
                used[n] = None
                _describe_paper(P[n], rng_meta, titles)
    pool = sorted((n for n in used if P[n].ft), key=lambda n: P[n].arxiv)
    skeletons = {n: _skeleton(rng_sk) for n in pool}

    content = _Content(universe, skeletons, rng_content)
    out = Path(out_dir)
    for sub_dir in ("qa", "graphs", "paper_pool", "audit"):
        (out / sub_dir).mkdir(parents=True, exist_ok=True)
    tmp = {name: out / (name + ".tmp") for name in RELEASE_FILES}

    venues_default = vocab.VENUES
    n_edges = 0
    with open(tmp["qa/full.jsonl"], "w", encoding="utf-8", newline="\n") as fq, \
            open(tmp["graphs/full.jsonl"], "w", encoding="utf-8", newline="\n") as fg, \
            open(tmp["audit/recall_labels.jsonl"], "w", encoding="utf-8", newline="\n") as fl:
        for k, it in enumerate(items):
            rng = rng_content
            sp = P[it.seed]
            q, options, dtypes, labels, claims = content.item(it, correct_idx[k])
            area_venues = vocab.AREA_VENUES[it.topic % len(vocab.AREA_VENUES)]
            venue = rng.choice(area_venues) if rng.random() < 0.8 else rng.choice(venues_default)
            mt = it.cell.startswith("mt")
            tier = tiers[k]
            agree = 0 if tier == "gold" else 1 if tier == "silver" else rng.randint(0, 2)
            skill = rng.choice(("synthesize", "contrast", "reason") if mt else
                               ("retrieve", "reason", "assess", "justify", "contrast"))
            bridges = list(dict.fromkeys(it.bridges))
            bridge_needed = (rng.random() < 0.8) if it.cell.endswith("d2") else None
            row: dict[str, object] = {
                "id": it.sid,
                "question_type": "multi-target" if mt else "single-target",
                "depth": int(it.cell[-1]),
                "reasoning_type": it.reasoning,
                "cognitive_skill": skill,
                "venue": venue,
                "consensus_tier": tier,
                "question": q,
                "options": options,
                "correct_index": correct_idx[k],
                "distractor_types": dtypes,
                "seed_paper_id": sp.pid,
                "seed_arxiv_id": sp.arxiv,
                "seed_title": sp.title,
                "gold_paper_ids": [P[g].pid for g in it.golds],
                "gold_arxiv_ids": [P[g].arxiv for g in it.golds],
                "bridge_paper_ids": [P[b].pid for b in bridges],
                "bridge_arxiv_ids": [P[b].arxiv for b in bridges],
                "filter_agreement": agree,
            }
            if mt and bridge_needed is not None:
                row["bridge_necessary"] = bridge_needed
            fq.write(_dump(row) + "\n")

            node_part = ", ".join(f'"{P[n].pid}": {P[n].node_json}' for n in it.nodes)
            edge_part = ", ".join(
                f'"{P[s].pid}": [' + ", ".join(f'"{P[d].pid}"' for d in dsts) + "]" for s, dsts in it.edges.items())
            n_edges += sum(len(d) for d in it.edges.values())
            fg.write(f'{{"sample_id": "{it.sid}", "seed": "{sp.pid}", "nodes": {{{node_part}}}, '
                     f'"edges": {{{edge_part}}}}}\n')

            label_rows = []
            for lab in labels:
                lp = P[lab.paper]
                entry: dict[str, object] = {
                    "paper": lp.title,
                    "arxiv_id": lp.arxiv if lab.arxiv_override is None else lab.arxiv_override,
                    "section": lab.section,
                    "relevance": lab.relevance,
                    "what_it_contains": lab.contains,
                }
                entry.update(lab.extra)
                label_rows.append(entry)
            missing = [lab.section for lab in labels if lab.missing]
            qv = rng.choices(("pass", "warn", "fail"), (85, 12, 3))[0]
            analysis: dict[str, object] = {
                "query_quality": {"verdict": qv, "natural": qv != "fail", "unambiguous": qv == "pass",
                                  "requires_target": True, "note": "" if qv == "pass" else "Wording could be tighter."},
                "answer_validity": {"verdict": "pass" if rng.random() < 0.9 else "warn", "claims": claims},
                "chain_coherence": None if mt else {
                    "verdict": "pass",
                    "seed_to_bridge": None if it.cell == "st_d1" else "The seed builds directly on the bridge.",
                    "bridge_to_terminal": None if it.cell == "st_d1" else "The bridge cites the target for its setup.",
                    "bridge_necessary": bridge_needed,
                    "note": "",
                },
                "synthesis_check": {
                    "verdict": "pass" if rng.random() < 0.85 else "warn",
                    "both_targets_needed": True,
                    "target_1_contribution": claims[0]["claim"],
                    "target_2_contribution": claims[1]["claim"],
                    "genuine_synthesis": rng.random() < 0.8,
                    "note": "",
                } if mt else None,
                "section_recall_labels": label_rows,
                "structural_integrity": {"verdict": "warn" if missing else "pass", "missing_sections": missing,
                                         "note": "Auditor named a section the paper does not have." if missing else ""},
            }
            fl.write(_dump({"sample_id": it.sid, "analysis": analysis}) + "\n")

    banks = _sentence_banks(rng_text)
    avg_lens = [sum(len(s) + 1 for s in b) / len(b) for b in banks]
    with open(tmp["paper_pool/papers.jsonl"], "w", encoding="utf-8", newline="\n",
              buffering=1 << 20) as fp:
        for n in pool:
            p = P[n]
            a = p.topic % len(banks)
            sections = [{"header": s.header, "text": _render_text(s, banks[a], avg_lens[a], rng_text)}
                        for s in skeletons[n].sections]
            fp.write(_dump({"arxiv_id": p.arxiv, "title": p.title, "sections": sections}) + "\n")

    for name, path in tmp.items():
        path.replace(out / name)
    n_nodes = sum(len(it.nodes) for it in items)
    (out / "README.md").write_text(_readme(seed, n_items, cells, len(pool), n_nodes, n_edges), encoding="utf-8")
    return GeneratedRelease(n_items, cells, len(pool), n_nodes, n_edges)


def _readme(seed: int, n_items: int, cells: dict[str, int], n_papers: int, n_nodes: int, n_edges: int) -> str:
    cell_text = ", ".join(f"{k} {v}" for k, v in cells.items())
    return (
        f"{SYNTHETIC_MARKER}\n"
        "# Synthetic AgentHop release\n\n"
        "This directory was written by `agenthop-harness make-benchmark`. It is SYNTHETIC: generated\n"
        "papers, questions and labels in the AgentHop release format (qa/, graphs/, paper_pool/, audit/).\n"
        "It is not the published benchmark; numbers measured on it are not comparable with the paper.\n\n"
        f"- seed: {seed}\n"
        f"- items: {n_items} ({cell_text})\n"
        f"- papers in pool: {n_papers}\n"
        f"- neighbourhood nodes (summed over items): {n_nodes}\n"
        f"- edges (summed over items): {n_edges}\n\n"
        "Regenerate with the same seed and item count to get byte-identical files.\n"
    )


def is_synthetic_release(path: str | Path) -> bool:
    """True if ``path`` holds a release written by :func:`make_benchmark` (README marker)."""
    readme = Path(path) / "README.md"
    try:
        with open(readme, encoding="utf-8") as fh:
            return fh.readline().strip() == SYNTHETIC_MARKER
    except (OSError, UnicodeDecodeError):
        return False


def clear_release(path: str | Path) -> None:
    """Remove the files of a previous synthetic release (only the names this module writes)."""
    root = Path(path)
    for name in (*RELEASE_FILES, "README.md"):
        (root / name).unlink(missing_ok=True)
    for sub_dir in ("qa", "graphs", "paper_pool", "audit"):
        d = root / sub_dir
        if d.is_dir() and not any(d.iterdir()):
            shutil.rmtree(d)


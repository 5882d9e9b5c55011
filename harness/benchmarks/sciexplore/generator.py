"""A seeded SYNTHETIC SciExplore release with the paper's shape (docs/sciexplore.md#synthetic-release).

103 tasks: 39 T1 (hops 2/3/4/5/6 = 9/10/8/8/4), 32 T2, 14 T3, 18 T4, over twelve domains and
sixteen databases; ``corpus/documents.jsonl`` holds every document a task's answer rests on
(database records along each T1 chain, each T2 key paper, every T3 reference, one source paper per
T4 row) plus distractors that share their vocabulary. Same seed, same bytes.
"""

from __future__ import annotations

import json
import random
import shutil
from dataclasses import dataclass
from pathlib import Path

from .release import CORPUS_FILE, TASKS_FILE, CitationGroup, Document, Reference, Task, document_to_json, task_to_json

TYPE_COUNTS = {"T1": 39, "T2": 32, "T3": 14, "T4": 18}
HOP_COUNTS = {2: 9, 3: 10, 4: 8, 5: 8, 6: 4}
DOMAINS = (
    "genomics", "proteomics", "pharmacology", "medicinal chemistry", "materials science", "catalysis",
    "earth science", "climate science", "neuroscience", "ecology", "astronomy", "machine learning",
)
DATABASES = (
    "PubChem", "Open Targets", "ChEMBL", "UniProt", "Materials Project", "GWAS Catalog", "PDB", "Ensembl",
    "ClinVar", "NCBI Gene", "KEGG", "Reactome", "DrugBank", "OQMD", "GBIF", "NASA Exoplanet Archive",
)
#: the long tail of the paper's database distribution: the first few carry most T1 chains
DATABASE_WEIGHTS = (9, 8, 5, 5, 4, 4, 3, 3, 2, 2, 2, 1, 1, 1, 1, 1)
README = "README.md"
MARKER = "SYNTHETIC SciExplore release"

_SYL = ("ka", "lo", "mi", "ra", "ve", "to", "zen", "dor", "phi", "sul", "nex", "tra", "qui", "bel", "mor", "syn")
_METHODS = ("contrastive pretraining", "graph neural networks", "Bayesian optimisation", "cryo-EM reconstruction",
            "high-throughput screening", "density functional theory", "single-cell sequencing",
            "diffusion models", "mass spectrometry imaging", "active learning", "molecular dynamics")
_OBJECTS = ("protein stability", "catalyst discovery", "drug-target affinity", "crystal structure prediction",
            "aerosol forcing", "species distribution", "exoplanet detection", "synaptic plasticity",
            "variant pathogenicity", "reaction yield", "soil carbon flux", "battery electrolytes")
_VENUES = ("Nature", "Science", "Cell", "NeurIPS", "JACS", "Phys. Rev. B", "PNAS", "Bioinformatics", "ICML",
           "Nucleic Acids Res.", "Geophys. Res. Lett.", "ApJ")
_SURNAMES = ("Okafor", "Lindqvist", "Haddad", "Tanaka", "Moreau", "Silva", "Novak", "Chen", "Ibrahim", "Kowalski",
             "Patel", "Fischer", "Ruiz", "Sato", "Nguyen", "Adeyemi")
_T4_SCHEMAS = (
    ("Material", "Band gap (eV)", "Crystal system", "Synthesis route"),
    ("Compound", "Target", "IC50 (nM)", "Assay"),
    ("Model", "Dataset", "Accuracy (%)", "Parameters"),
    ("Species", "Habitat", "Range (km2)"),
    ("Mission", "Instrument", "Wavelength", "Launch year", "Agency"),
    ("Gene", "Variant", "Phenotype", "Odds ratio"),
)


@dataclass(frozen=True, slots=True)
class Made:
    tasks: int
    documents: int
    by_type: dict[str, int]
    domains: int


class _Gen:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.docs: list[Document] = []
        self.names: set[str] = set()

    def name(self, syllables: int = 3) -> str:
        while True:
            n = "".join(self.rng.choice(_SYL) for _ in range(syllables)).capitalize()
            if n not in self.names:
                self.names.add(n)
                return n

    def code(self, prefix: str) -> str:
        while True:
            c = f"{prefix}-{self.rng.randrange(10_000, 99_999)}"
            if c not in self.names:
                self.names.add(c)
                return c

    def doc(self, kind: str, title: str, text: str, *, database: str | None = None, year: int | None = None) -> Document:
        d = Document(id=f"doc_{len(self.docs) + 1:05d}", kind=kind, database=database, title=title, text=text,
                     url=f"https://corpus.sciexplore.invalid/{kind}/{len(self.docs) + 1:05d}", year=year)
        self.docs.append(d)
        return d

    def paper(self, domain: str, *, title: str | None = None, text: str = "") -> Reference:
        year = self.rng.randrange(2008, 2026)
        title = title or (f"{self.rng.choice(_METHODS).capitalize()} for {self.rng.choice(_OBJECTS)}: "
                          f"the {self.name()} approach")
        authors = tuple(f"{self.rng.choice('ABCDEFGHJKLMNPRST')}. {self.rng.choice(_SURNAMES)}"
                        for _ in range(self.rng.randrange(1, 4)))
        ref = Reference(title=title, year=year, authors=authors, venue=self.rng.choice(_VENUES),
                        doi=f"10.{self.rng.randrange(1000, 9999)}/sx.{self.rng.randrange(10**5, 10**6)}")
        body = text or f"We study {domain} with {title.lower()}."
        self.doc("paper", title, f"{body} Authors: {', '.join(authors)}. {ref.venue} ({year}). DOI {ref.doi}.",
                 year=year)
        return ref

    def database(self) -> str:
        return self.rng.choices(DATABASES, weights=DATABASE_WEIGHTS)[0]


def _t1(g: _Gen, tid: str, domain: str, hops: int) -> Task:
    """A chain of ``hops`` database records; the last one holds the attribute asked for."""
    entities = [g.name() for _ in range(hops)]
    dbs = [g.database() for _ in range(hops)]
    answer = g.code(g.rng.choice(("ACC", "CID", "MP", "GCST", "ENSG")))
    alias = answer.replace("-", "")
    for i, (ent, db) in enumerate(zip(entities, dbs)):
        link = (f"It is linked to {entities[i + 1]} (see {dbs[i + 1]})." if i + 1 < hops
                else f"Its accession attribute is {answer}.")
        g.doc("record", f"{ent} [{db}]", f"{db} record for {ent} in {domain}. {link}", database=db)
        # a distractor record with the same database and a near-identical name
        g.doc("record", f"{ent}a [{db}]", f"{db} record for {ent}a in {domain}. It is linked to {g.name()}.",
              database=db)
    q = (f"In {domain}: start from the {dbs[0]} entry {entities[0]} and follow its cross-references "
         f"through {hops - 1} further database record(s). What is the accession attribute of the last record "
         f"you reach? Answer with the identifier only.")
    return Task(id=tid, type="T1", domain=domain, question=q, answer=answer, aliases=(alias,), hops=hops,
                databases=tuple(dict.fromkeys(dbs)))


def _t2(g: _Gen, tid: str, domain: str) -> Task:
    method, obj = g.rng.choice(_METHODS), g.rng.choice(_OBJECTS)
    key = g.paper(domain, title=f"{method.capitalize()} reveals {obj} in {g.name()} systems",
                  text=f"A {domain} study that combines {method} with a new benchmark of {obj}.")
    for _ in range(2):  # distractors: same method, other object
        g.paper(domain, title=f"{method.capitalize()} for {g.rng.choice(_OBJECTS)}")
    q = (f"Identify the {domain} paper (published around {key.year}) that combined a technique in the family of "
         f"{method.split()[0]} methods with a new benchmark on {obj}. Give its title.")
    return Task(id=tid, type="T2", domain=domain, question=q, answer=key.title,
                aliases=(key.doi or "", f"arXiv:{g.rng.randrange(1500, 2600)}.{g.rng.randrange(10000, 99999)}"),
                year=key.year)


def _t3(g: _Gen, tid: str, domain: str) -> Task:
    n_slots = g.rng.randrange(2, 5)
    sentences, groups = [], []
    for s in range(1, n_slots + 1):
        refs = tuple(g.paper(domain) for _ in range(g.rng.randrange(1, 4)))
        claim = f"{refs[0].title.split(':')[0]} improved {g.rng.choice(_OBJECTS)}"
        sentences.append(f"{claim} [CITE_{s}].")
        groups.append(CitationGroup(f"CITE_{s}", refs))
    g.paper(domain)  # a distractor paper
    paragraph = " ".join(sentences)
    q = (f"The following {domain} paragraph lost its citations. For each slot [CITE_n], list the reference(s) "
         f"it cites with title, authors, venue, year and DOI.\n\n{paragraph}")
    return Task(id=tid, type="T3", domain=domain, question=q, paragraph=paragraph, groups=tuple(groups))


def _cell(g: _Gen, column: str) -> str:
    c = column.lower()
    if "year" in c:
        return str(g.rng.randrange(1995, 2026))
    if any(k in c for k in ("(ev)", "(nm)", "(%)", "ratio", "range", "parameters", "wavelength")):
        return f"{g.rng.uniform(0.1, 99):.2f}"
    return g.name(2)


def _t4(g: _Gen, tid: str, domain: str) -> Task:
    columns = g.rng.choice(_T4_SCHEMAS)
    pk = columns[0]
    rows = []
    for _ in range(g.rng.randrange(4, 9)):
        row = {pk: g.name()} | {c: _cell(g, c) for c in columns[1:]}
        rows.append(row)
        facts = "; ".join(f"{c}: {row[c]}" for c in columns[1:])
        g.paper(domain, text=f"We characterise {row[pk]} ({facts}).")
    g.paper(domain, text=f"A review of {domain} that mentions {g.name()} without measurements.")
    header = " | ".join(columns)
    q = (f"Survey the {domain} literature and build a comparison table as Markdown with exactly these columns, "
         f"one row per {pk.lower()}: | {header} |")
    return Task(id=tid, type="T4", domain=domain, question=q, columns=tuple(columns), primary_key=pk,
                rows=tuple(rows))


def generate(seed: int = 0) -> tuple[list[Task], list[Document]]:
    """The tasks and corpus of the synthetic release (pure: same seed, same result)."""
    g = _Gen(seed)
    tasks: list[Task] = []
    hops = [h for h, n in HOP_COUNTS.items() for _ in range(n)]
    g.rng.shuffle(hops)
    makers = {"T1": lambda tid, d, i: _t1(g, tid, d, hops[i]), "T2": lambda tid, d, i: _t2(g, tid, d),
              "T3": lambda tid, d, i: _t3(g, tid, d), "T4": lambda tid, d, i: _t4(g, tid, d)}
    for ttype, n in TYPE_COUNTS.items():
        for i in range(n):
            domain = DOMAINS[(i + len(tasks)) % len(DOMAINS)]
            tasks.append(makers[ttype](f"{ttype.lower()}_{i + 1:03d}", domain, i))
    docs = list(g.docs)
    g.rng.shuffle(docs)  # evidence is not adjacent to its task in the file
    return tasks, docs


def is_synthetic_release(root: Path) -> bool:
    p = Path(root) / README
    return p.is_file() and MARKER in p.read_text(encoding="utf-8", errors="replace")


def clear_release(root: Path) -> None:
    for rel in (TASKS_FILE, README):
        (Path(root) / rel).unlink(missing_ok=True)
    shutil.rmtree(Path(root) / "corpus", ignore_errors=True)


def _write_jsonl(path: Path, objs) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        for o in objs:
            fh.write(json.dumps(o, ensure_ascii=False, separators=(",", ":")) + "\n")


def write_release(root: Path, seed: int = 0) -> Made:
    """Write the synthetic release into ``root`` (tasks.jsonl, corpus/documents.jsonl, README.md)."""
    root = Path(root)
    tasks, docs = generate(seed)
    root.mkdir(parents=True, exist_ok=True)
    _write_jsonl(root / TASKS_FILE, (task_to_json(t) for t in tasks))
    _write_jsonl(root / CORPUS_FILE, (document_to_json(d) for d in docs))
    by_type = {t: sum(1 for x in tasks if x.type == t) for t in TYPE_COUNTS}
    (root / README).write_text(
        f"# {MARKER}\n\nWritten by `agenthop-harness make-benchmark --benchmark sciexplore --seed {seed}`.\n"
        f"{len(tasks)} tasks ({', '.join(f'{k} {v}' for k, v in by_type.items())}), {len(docs)} corpus documents.\n"
        "Invented names and values: not real science. Format: docs/sciexplore.md#release-format.\n",
        encoding="utf-8")
    return Made(tasks=len(tasks), documents=len(docs), by_type=by_type, domains=len({t.domain for t in tasks}))

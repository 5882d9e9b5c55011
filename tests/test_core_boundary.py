"""The core never names a benchmark's tools, tables or columns: those live in the benchmark's folders.

Scanned: the harness core (harness/*.py, harness/backends/), the ingest core (ingest/*.py; its
sources under ingest/sources/ and the reference-harness importer, which reads AgentHop's own format,
are AgentHop's), the shared dbt models (models_sql/marts/core/, models_sql/intermediate/core/) and
the shared staging models (models_sql/staging/*.sql, which pass the shared raw tables' columns, the
benchmark-only nullable ones included, as dbt's source-conformed staging does: checked for tools and
tables), and the report core (reports/core/, every module at the top of reports/: the site, render,
chart, statistics, warehouse and freshness modules and the CLI, plus the shared page templates;
AgentHop's report modules, its pages, sections and SQL, are reports/agenthop/; the paper report,
reports/paper/, is AgentHop's analyses on the table and export machinery SciExplore's report reuses,
and is not scanned). The names come from AgentHop's schema module and tool list, so a new AgentHop
name is covered without editing this test.
"""

from __future__ import annotations

import re
from pathlib import Path

from agenthop.harness import benchmarks
from agenthop.schemas import agenthop as agenthop_schema

REPO = Path(__file__).resolve().parents[1]

#: the importer of the AgentHop reference harness's JSON (AgentHop's own format; its place is ingest/sources/)
REFERENCE_IMPORTER = ("reference_json.py", "reference_parse.py", "reference_bulk.py")

TOOLS = benchmarks.get("agenthop").tool_names
TABLES = tuple(agenthop_schema.TABLES)
#: trajectory-store columns only AgentHop fills (docs/formats.md) and its item attributes
COLUMNS = (
    "paper_id", "section_query", "resolved_header", "resolved_section_index", "search_query", "predicted_index",
    "question_type", "reasoning_type", "correct_index", "arxiv_id", "gold_paper_ids",
)

def _quoted(names: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(r"""["'](""" + "|".join(map(re.escape, names)) + r""")["']""")


def _bare(names: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")


TABLE_REFS = re.compile(r"\b(?:raw\.|stg_benchmark__)(" + "|".join(TABLES) + r")\b")


def python_hits(text: str) -> set[str]:
    """AgentHop names a Python module uses as values (strings) or table references."""
    return ({m.group(1) for m in _quoted(TOOLS + COLUMNS).finditer(text)}
            | {m.group(1) for m in TABLE_REFS.finditer(text)})


def sql_hits(text: str, columns: bool = True) -> set[str]:
    """AgentHop names an SQL model uses (comments aside)."""
    code = re.sub(r"--[^\n]*|\{#.*?#\}", "", text, flags=re.S)
    found = {m.group(1) for m in _quoted(TOOLS).finditer(code)} | {m.group(1) for m in TABLE_REFS.finditer(code)}
    if columns:
        found |= {m.group(1) for m in _bare(COLUMNS).finditer(code)}
    return found


def core_files() -> list[tuple[Path, set[str]]]:
    out = []
    for p in sorted([*REPO.glob("harness/*.py"), *REPO.glob("harness/backends/*.py")]):
        out.append((p, python_hits(p.read_text())))
    for p in sorted(REPO.glob("ingest/*.py")):
        if p.name not in REFERENCE_IMPORTER:
            out.append((p, python_hits(p.read_text())))
    for folder in ("models_sql/marts/core", "models_sql/intermediate/core"):
        for p in sorted(REPO.glob(f"{folder}/*.sql")):
            out.append((p, sql_hits(p.read_text())))
    for p in sorted(REPO.glob("models_sql/staging/*.sql")):
        out.append((p, sql_hits(p.read_text(), columns=False)))
    for p in report_core_files():
        out.append((p, python_hits(p.read_text())))
    return out


#: the report core: every module at the top of reports/ (a benchmark's own are in reports/<benchmark>/),
#: the shared pages and the shared pages' templates
REPORT_CORE = ("reports/*.py", "reports/core/*.py", "reports/inspect/*.py", "reports/templates/base.html.j2",
               "reports/templates/core_*.html.j2", "reports/templates/_core_*.html.j2",
               "reports/templates/_section_table.html.j2", "reports/templates/inspect_*.html.j2")


def report_core_files() -> list[Path]:
    return sorted({p for pattern in REPORT_CORE for p in REPO.glob(pattern)})


def test_the_scan_finds_agenthop_names_where_they_belong() -> None:
    """The patterns are not vacuous: AgentHop's own modules are full of these names."""
    assert {"submit_answer", "paper_id"} <= python_hits((REPO / "harness/benchmarks/agenthop/tools.py").read_text())
    assert "items" in sql_hits((REPO / "models_sql/intermediate/agenthop/int_trajectories_final.sql").read_text())
    assert "paper_id" in sql_hits((REPO / "models_sql/intermediate/agenthop/int_tool_calls_final.sql").read_text())
    assert {"submit_answer", "items"} <= python_hits((REPO / "reports/agenthop/queries/behaviour.py").read_text()
                                                      + (REPO / "reports/agenthop/queries/items.py").read_text())


def test_the_report_core_is_scanned() -> None:
    names = {str(p.relative_to(REPO)) for p in report_core_files()}
    assert {"reports/core/compare.py", "reports/core/queries.py", "reports/core/registry.py", "reports/site.py",
            "reports/templates/core_compare.html.j2", "reports/templates/_core_macros.html.j2"} <= names
    # every module at the top of reports/ is the core's: AgentHop's pages and SQL live in reports/agenthop/
    top = {p.name for p in (REPO / "reports").glob("*.py")}
    assert {"cli.py", "site.py", "render.py", "stats.py", "charts.py", "values.py"} <= top
    assert {f"reports/{n}" for n in top} <= names
    assert not top & {"compare.py", "reruns.py", "item.py", "leaderboard.py", "sections.py", "conditions.py"}
    folders = {p.name for p in (REPO / "reports").iterdir() if (p / "__init__.py").exists()}
    assert {"core", "agenthop", "sciexplore"} <= folders and "queries" not in folders


def test_core_modules_name_no_agenthop_tool_table_or_column() -> None:
    files = core_files()
    assert len(files) > 30  # the globs found the core
    unexpected = {str(path.relative_to(REPO)): sorted(hits) for path, hits in files if hits}
    assert not unexpected, f"core modules naming AgentHop tools/tables/columns: {unexpected}"


IMPORTS_A_BENCHMARK = re.compile(r"^\s*(?:from|import)\s+[\w.]*benchmarks\.(?!__init__)\w+", re.M)
OLD_ALIASES = re.compile(r"^\s*from\s+\.+(?:benchmark|sandbox|policies)\b", re.M)


def test_core_modules_import_no_benchmark_folder() -> None:
    """The harness core reaches a benchmark only through the registry (``from . import benchmarks``)."""
    offenders = {}
    for p in sorted([*REPO.glob("harness/*.py"), *REPO.glob("harness/backends/*.py")]):
        text = p.read_text()
        found = IMPORTS_A_BENCHMARK.findall(text) + OLD_ALIASES.findall(text)
        if found:
            offenders[str(p.relative_to(REPO))] = [f.strip() for f in found]
    assert not offenders, f"core modules importing a benchmark's folder: {offenders}"
    assert IMPORTS_A_BENCHMARK.search("from agenthop.harness.benchmarks.agenthop.tools import Sandbox")
    assert OLD_ALIASES.search("from .sandbox.tools import Sandbox")


def _benchmark_tables() -> dict[str, str]:
    """raw table -> the benchmark that declares it, from the registry (release and extra tables)."""
    return {t: b.name for b in benchmarks.available() for t in [*b.raw_tables, *b.extra_tables]}


def test_core_modules_name_no_benchmark_table() -> None:
    """A benchmark's raw tables (release and extra ones, SciExplore's ``judgments`` too) are reached
    through its registry hooks, never named by the harness, ingest or report core (help strings
    included) or the shared models. The names come from the registry, so a new benchmark's tables
    are covered without editing this test."""
    owner = _benchmark_tables()
    assert {"judgments", "sciexplore_responses", "sciexplore_tasks", "items"} <= set(owner)
    names = tuple(sorted(owner, key=len, reverse=True))
    refs = re.compile(r"\braw\.(" + "|".join(map(re.escape, names)) + r")\b")
    quoted = _quoted(tuple(n for n in names if n.startswith(owner[n] + "_")))
    assert refs.search("help='a judge name in raw.judgments'") and quoted.search("'sciexplore_trace'")
    offenders = {}
    for p, _ in core_files():
        text = p.read_text()
        found = {m.group(1) for m in refs.finditer(text)} | {m.group(1) for m in quoted.finditer(text)}
        if found:
            offenders[str(p.relative_to(REPO))] = sorted(found)
    assert not offenders, f"core modules naming a benchmark's tables: {offenders}"


#: the per-benchmark schema modules (``schemas/<benchmark>.py``), named as the registry names them
SCHEMA_MODULES = frozenset(p.stem for p in (REPO / "schemas").glob("*.py")) & frozenset(benchmarks.names())


def schema_imports(text: str) -> list[str]:
    """The per-benchmark schema modules a Python module imports (absolute or relative imports)."""
    import ast

    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            mods = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            mods = [base] + [f"{base}.{a.name}" for a in node.names]
        else:
            continue
        for mod in mods:
            parts = mod.split(".")
            if any(a == "schemas" and b in SCHEMA_MODULES for a, b in zip(parts, parts[1:])):
                found.append(mod)
    return found


def test_core_modules_import_no_benchmark_schema() -> None:
    """Per-benchmark schemas (``schemas/agenthop.py``, ``schemas/sciexplore.py``) reach the core only
    through the registry (``Benchmark.raw_tables`` / ``extra_tables``): ``ingest/ddl.py`` once imported
    SciExplore's directly."""
    assert SCHEMA_MODULES >= {"agenthop", "sciexplore"}
    assert schema_imports("from agenthop.schemas import sciexplore as sx\n")
    assert schema_imports("from ..schemas.agenthop import ITEMS\n")
    assert schema_imports("import agenthop.schemas.sciexplore\n")
    assert not schema_imports("from agenthop.schemas import trajectory, quality\n")
    offenders = {}
    for p, _ in core_files():
        if p.suffix == ".py":
            found = schema_imports(p.read_text())
            if found:
                offenders[str(p.relative_to(REPO))] = found
    assert not offenders, f"core modules importing a benchmark's schema module: {offenders}"


def test_every_benchmark_table_is_in_the_layout() -> None:
    """What the registry declares is what ingest creates: no table of a benchmark goes missing now
    that ``ingest/ddl.py`` learns them only from the registry."""
    from agenthop.ingest import ddl

    layout = set(ddl.all_tables())
    assert set(_benchmark_tables()) <= layout
    for table in _benchmark_tables():
        assert ddl.warehouse_schema(table).names
        assert table in ddl.later_tables()


#: the programs' own names (``agenthop-harness``...), which a help text may spell; not a benchmark
_PROGRAMS = r"(?!-(?:harness|report|ingest|dbt)\b)"
_CLICK_TEXTS = {"option", "argument", "command", "group"}


def _benchmark_words() -> re.Pattern[str]:
    """Every registry name as a word, any case (``SciExplore``, ``agenthop``), the programs aside."""
    return re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, benchmarks.names())) + r")" + _PROGRAMS + r"(?!\w)",
                      re.I)


def _literal_parts(node: object) -> list[str]:
    """The literal text of a string expression: a constant, an f-string's fixed parts, a ``+`` of them."""
    import ast

    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        return [v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str)]
    if isinstance(node, ast.BinOp):
        return _literal_parts(node.left) + _literal_parts(node.right)
    return []


def help_literals(text: str) -> list[tuple[int, str]]:
    """(line, text) of every help text a module writes literally: ``help=``/``epilog=``/``short_help=``
    of click's ``option``/``argument``/``command``/``group`` and the docstrings of its commands."""
    import ast

    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in _CLICK_TEXTS:
                found += [(node.lineno, t) for kw in node.keywords if kw.arg in ("help", "epilog", "short_help")
                          for t in _literal_parts(kw.value)]
        elif isinstance(node, ast.FunctionDef) and any(
                isinstance(d, ast.Call) and getattr(d.func, "attr", getattr(d.func, "id", "")) in ("command", "group")
                for d in node.decorator_list):
            found.append((node.lineno, ast.get_docstring(node) or ""))
    return found


def test_the_harness_core_help_never_names_a_benchmark() -> None:
    """The core's command-line help (``agenthop-harness run``, ``make-benchmark``) gets every benchmark's
    name and semantics from the registry (harness/run_help.py), never from a literal: ``--paradigm``,
    ``--search`` and the caps' help once said "SciExplore: ...". The names come from the registry, so
    a new benchmark is covered without editing this test."""
    words = _benchmark_words()
    assert words.search("help='SciExplore: the paradigm's'") and words.search("(default agenthop).")
    assert not words.search("agenthop-harness run --help") and not words.search("an AgentHopError")
    sample = '@click.command("x")\n@click.option("--x", help="SciExplore: " f"a {y}")\ndef x():\n    """Doc."""\n'
    assert sorted(help_literals(sample)) == [(2, "SciExplore: a "), (3, "Doc.")]
    files = sorted([*REPO.glob("harness/*.py"), *REPO.glob("harness/backends/*.py")])
    scanned = {p.name for p in files if help_literals(p.read_text())}
    assert {"run_command.py", "make_benchmark.py"} <= scanned  # the scan sees the commands' help
    offenders = {f"{p.relative_to(REPO)}:{line}": text for p in files for line, text in help_literals(p.read_text())
                 if words.search(text)}
    assert not offenders, f"core help texts naming a benchmark: {offenders}"


def test_the_harness_core_help_never_names_a_benchmark_archetype() -> None:
    """Nor a benchmark's simulated archetypes: ``run --model``'s help once gave "early-committer" (an
    AgentHop archetype) as its example; the archetypes come from the registry (``Benchmark.policies``),
    in either spelling (``early_committer``, ``early-committer``)."""
    names = {n for b in benchmarks.available() for p in b.policies for n in (p, p.replace("_", "-"))}
    words = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, sorted(names))) + r")(?![\w-])", re.I)
    assert words.search("(a sim archetype name such as early-committer, or a label)")
    files = sorted([*REPO.glob("harness/*.py"), *REPO.glob("harness/backends/*.py")])
    offenders = {f"{p.relative_to(REPO)}:{line}": text for p in files for line, text in help_literals(p.read_text())
                 if words.search(text)}
    assert not offenders, f"core help texts naming a benchmark's archetype: {offenders}"


#: subcommands whose examples may name a benchmark's things, and why: a benchmark's own commands (their
#: callback lives in harness/benchmarks/<name>/) and the report pages, whose examples must name models the
#: demo warehouse holds (panels/demo.yaml's labels; `sciexplore` is SciExplore's page) to run on it
#: (tests/test_cli_examples.py runs them). Every other subcommand is the core's: its examples are scanned.
EXAMPLE_EXEMPT_REPORT_PAGES = ("compare", "leaderboard", "reruns", "item", "model", "paper", "sciexplore")


def _core_example_commands() -> dict[str, tuple[str, ...]]:
    from agenthop.harness.cli import main as harness_main
    from agenthop.harness.cli_examples import EXAMPLES
    from agenthop.ingest.cli import main as ingest_main
    from agenthop.reports.cli import main as report_main

    commands = {"agenthop-ingest": ingest_main}
    commands.update({f"agenthop-harness {n}": c for n, c in harness_main.commands.items()})  # type: ignore[attr-defined]
    commands.update({f"agenthop-report {n}": c for n, c in report_main.commands.items()  # type: ignore[attr-defined]
                     if n not in EXAMPLE_EXEMPT_REPORT_PAGES})
    return {name: EXAMPLES[name] for name, cmd in commands.items()
            if not cmd.callback.__module__.startswith("agenthop.harness.benchmarks.")}


#: the project's default warehouse file (Makefile's AGENTHOP_DB), which the examples pass to --db: the
#: project's name, not the benchmark's
_DEFAULT_DB = "warehouse/agenthop.duckdb"


def example_literals() -> dict[str, list[str]]:
    """The example text harness/cli_examples.py and harness/run_help.py write literally, per command:
    the fixed lines of each entry, and for ``agenthop-harness run`` the fixed parts of ``run_examples``."""
    import ast

    out: dict[str, list[str]] = {}
    tree = ast.parse((REPO / "harness" / "cli_examples.py").read_text())
    fixed = next(n.value for n in ast.walk(tree) if isinstance(n, ast.AnnAssign) and getattr(n.target, "id", "") == "_FIXED")
    assert isinstance(fixed, ast.Dict)
    for key, value in zip(fixed.keys, fixed.values, strict=True):
        assert isinstance(key, ast.Constant) and isinstance(value, ast.Tuple)
        out[key.value] = [t for elt in value.elts for t in _literal_parts(elt)]
    fn = next(n for n in ast.walk(ast.parse((REPO / "harness" / "run_help.py").read_text()))
              if isinstance(n, ast.FunctionDef) and n.name == "run_examples")
    out.setdefault("agenthop-harness run", []).extend(n.value for n in ast.walk(fn) if isinstance(n, ast.Constant) and isinstance(n.value, str))
    return out


def test_the_core_help_examples_name_no_benchmark_or_archetype() -> None:
    """The examples under a core command's --help (harness/cli_examples.py) are help text too: ``run``'s
    once showed ``--model verifier`` and ``--sim-archetype balanced`` (AgentHop archetypes). Their lines
    come from the registry now (harness/run_help.py ``run_examples``: the demo benchmark's archetypes
    and conditions), so the literal text of a core command's examples names no benchmark or archetype;
    tests/test_cli_examples.py runs the lines on the demo."""
    from agenthop.harness.cli_examples import EXAMPLES
    from agenthop.harness.run_help import run_examples
    from agenthop.schemas.trajectory import DEFAULT_BENCHMARK

    archetypes = {n for b in benchmarks.available() for p in b.policies for n in (p, p.replace("_", "-"))}
    words = [_benchmark_words(),
             re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, sorted(archetypes))) + r")(?![\w-])", re.I)]
    assert words[1].search("agenthop-harness run --model verifier --condition no_search")
    literals = example_literals()
    core = _core_example_commands()
    assert {"agenthop-harness run", "agenthop-ingest", "agenthop-report sql"} <= set(core) <= set(literals)
    assert "agenthop-harness describe-benchmark" in core  # a core command: the registry detects the benchmark
    assert any("--sim-archetype" in t for t in literals["agenthop-harness run"])  # the scan sees run's lines
    offenders = {f"{name}: {text!r}": m.group(0) for name in core for text in literals[name] for w in words
                 if (m := w.search(text.replace(_DEFAULT_DB, "")))}
    assert not offenders, f"core help examples naming a benchmark or its archetypes: {offenders}"
    # what run --help shows is the registry entry's: its first archetype, under its second condition
    demo = benchmarks.get(DEFAULT_BENCHMARK)
    first = next(iter(demo.policies)).replace("_", "-")
    assert EXAMPLES["agenthop-harness run"] == run_examples(demo)
    assert f"--model {first} --condition {demo.conditions[1]} " in " ".join(EXAMPLES["agenthop-harness run"])


def test_run_help_describes_every_benchmark_from_its_registry_entry() -> None:
    """What ``run --help`` says per benchmark comes from its entry: a toy benchmark with paradigms, a
    run option and caps of its own appears in the texts without a change to the core."""
    from agenthop.harness.run_help import option_help, option_values

    toy = benchmarks.Benchmark(
        name="toyqa", title="toy", is_release=lambda root: False, release_marker="toy.jsonl",
        release_content_sha256=lambda root: "x", release_tables=lambda root, sha: None,  # type: ignore[arg-type,return-value]
        raw_tables={}, raw_keys={}, item_ids_sql="SELECT 'a'", conditions=("quick", "deep"),
        condition_kind="paradigms", default_caps=lambda c: {"budget": 5 if c == "quick" else 50, "max_turns": 7},
        run_option_docs={"search": benchmarks.RunOptionDoc(("corpus", "toyweb"), "where toyqa searches")},
        policies={"quick_guesser": {}, "slow_reader": {}},
    )
    texts = option_help([*benchmarks.available(), toy])
    assert "toyqa's quick-guesser, slow-reader" in texts["model"]
    assert "toyqa" in texts["benchmark"] and "toy.jsonl" in texts["data"]
    assert "toyqa's paradigms quick, deep" in texts["condition"] and "toyqa" in texts["paradigm"]
    assert "toyqa: where toyqa searches" in texts["search"]
    assert texts["budget"].startswith("Tool budget points (default 30;") and "toyqa's paradigms: quick 5, deep 50" in texts["budget"]
    assert "toyqa's paradigms: quick 7, deep 7" in texts["max_turns"] and "toyqa" not in texts["max_total_tokens"]
    assert option_values([*benchmarks.available(), toy], "search")[-1] == "toyweb"
    # without it, and with no benchmark at all, the texts still read as sentences
    assert "toyqa" not in " ".join(option_help(benchmarks.available()).values())
    empty = option_help([])
    assert "(none is registered), or any label" in empty["model"]
    assert empty["paradigm"].endswith("(none is registered).") and empty["budget"] == "Tool budget points (default 30)."


def test_run_help_shows_the_registry_in_80_columns() -> None:
    """The rendered ``run --help`` names each benchmark where its entry says so, and stays within 80
    columns (click wraps the texts; no line of an option's help runs past the terminal)."""
    from click.testing import CliRunner

    from agenthop.harness.cli import main

    out = CliRunner().invoke(main, ["run", "--help"], terminal_width=80).output
    flat = " ".join(out.split())
    for bench in benchmarks.available():
        assert f"{bench.name}'s {bench.condition_kind} {', '.join(bench.conditions)}" in flat
        if bench.condition_kind == "paradigms":
            assert f"whose conditions are paradigms ({bench.name}" in flat
        for option, doc in bench.run_option_docs.items():
            assert f"--{option} [{'|'.join(doc.values)}]" in out and f"{bench.name}: {' '.join(doc.help.split())}" in flat
    options = out.split("Options:", 1)[1].split("Examples", 1)[0]
    assert all(len(line) <= 80 for line in options.splitlines()), [ln for ln in options.splitlines() if len(ln) > 80]

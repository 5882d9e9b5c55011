"""Starting ``agenthop-harness run`` imports what the chosen backend and benchmark need, when they need
them: importing the command's module loads no provider SDK, no data library (pyarrow, numpy, polars,
DuckDB), no YAML parser and no benchmark's registry entry; ``run --help`` loads the registry for its
texts. Checked in a fresh interpreter through ``sys.modules`` (no timing is asserted)."""

from __future__ import annotations

import json
import subprocess
import sys

#: libraries a run loads only once it needs them (a backend's SDK, Arrow when it writes, YAML for a panel)
HEAVY = ("openai", "anthropic", "google.genai", "polars", "altair", "pandas", "pyarrow", "numpy", "duckdb",
         "yaml", "bm25s", "jinja2", "s3fs", "fsspec")


def _modules_after(code: str) -> set[str]:
    proc = subprocess.run([sys.executable, "-c", f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(proc.stdout.strip().splitlines()[-1]))


def _loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return [n for n in names if n in modules or any(m.startswith(n + ".") for m in modules)]


def test_importing_the_run_command_loads_no_sdk_data_library_or_benchmark() -> None:
    modules = _modules_after("import agenthop.harness.run_command")
    assert "agenthop.harness.run_command" in modules
    assert _loaded(modules, HEAVY) == []
    assert sorted(m for m in modules if m.startswith("agenthop.harness.benchmarks.")) == []
    assert not [m for m in modules if m.startswith("agenthop.harness.backends.")]


def test_the_command_line_loads_only_the_command_it_runs() -> None:
    """``agenthop-harness run`` parses its command line without the other commands or the registry."""
    modules = _modules_after("from agenthop.harness.cli import main\n"
                             "cmd = main.get_command(None, 'run')\nassert cmd.name == 'run'")
    assert "agenthop.harness.make_benchmark" not in modules and "agenthop.harness.describe_benchmark" not in modules
    assert _loaded(modules, HEAVY) == [] and not [m for m in modules if m.startswith("agenthop.harness.benchmarks.")]


def test_run_help_still_describes_every_benchmark() -> None:
    proc = subprocess.run([sys.executable, "-m", "agenthop.harness.cli", "run", "--help"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    from agenthop.harness import benchmarks

    for bench in benchmarks.available():
        assert f"{bench.name}'s has {bench.release_marker}" in " ".join(proc.stdout.split())
    assert "--search [corpus|native]" in proc.stdout and "Examples (on the demo" in proc.stdout

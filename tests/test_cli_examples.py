"""Every subcommand's --help shows its own examples, and every example runs on a small demo.

The examples (harness/cli_examples.py) use the demo's paths and model names; here they run with the
paths substituted: the harness and ingest examples build a small demo of their own, the report
examples read the session's end-to-end warehouse (the same simulated archetypes).
"""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from agenthop.harness.cli import main as harness_main
from agenthop.harness.cli_examples import EXAMPLES
from agenthop.ingest.cli import main as ingest_main
from agenthop.reports.cli import main as report_main
from conftest import REPO, BuiltWarehouse, _check, cli, dbt_env


def _commands() -> dict[str, click.Command]:
    found: dict[str, click.Command] = {"agenthop-ingest": ingest_main}
    for prog, group in (("agenthop-harness", harness_main), ("agenthop-report", report_main)):
        assert isinstance(group, click.Group)
        found.update({f"{prog} {name}": cmd for name, cmd in group.commands.items()})
    return found


def test_every_subcommand_has_its_own_examples() -> None:
    commands = _commands()
    assert set(commands) == set(EXAMPLES), "every subcommand needs an entry in harness/cli_examples.py"
    runner = CliRunner()
    for name, cmd in commands.items():
        result = runner.invoke(cmd, ["--help"], prog_name=name)
        assert result.exit_code == 0, result.output
        shown = [line.strip() for line in result.output.splitlines() if line.strip().startswith("agenthop-")]
        assert shown == list(EXAMPLES[name]), f"{name} --help must show exactly its own examples"
        assert all(line.startswith(name + " ") or line == name for line in shown)


def _substitute(line: str, paths: dict[str, str]) -> list[str]:
    args = shlex.split(line)
    out = []
    for i, arg in enumerate(args):
        if i and args[i - 1] == "--items":
            arg = "12"
        for old, new in paths.items():
            if arg == old or arg.startswith(old + "/"):
                arg = new + arg[len(old):]
        out.append(arg)
    return out


def test_harness_and_ingest_examples_run(tmp_path: Path) -> None:
    paths = {"out": str(tmp_path / "out"), "warehouse/agenthop.duckdb": str(tmp_path / "w.duckdb"),
             "panels/demo.yaml": str(REPO / "panels" / "demo.yaml")}
    env = dbt_env(tmp_path / "w.duckdb")
    order = ("agenthop-harness make-benchmark", "agenthop-harness describe-benchmark", "agenthop-harness run",
             "agenthop-ingest")
    for command in order:
        for line in EXAMPLES[command]:
            args = _substitute(line, paths)
            proc = subprocess.run([cli(args[0]), *args[1:]], env=env, capture_output=True, text=True, cwd=tmp_path)
            _check(proc, line)


@pytest.mark.parametrize("command", [c for c in EXAMPLES if c.startswith("agenthop-report ")])
def test_report_examples_run_on_the_demo_warehouse(command: str, built_warehouse: BuiltWarehouse,
                                                   tmp_path: Path) -> None:
    paths = {"out": str(tmp_path / "out"), "warehouse/agenthop.duckdb": str(built_warehouse.db)}
    runner = CliRunner()
    for line in EXAMPLES[command]:
        args = _substitute(line, paths)
        result = runner.invoke(report_main, args[1:], env={"AGENTHOP_DB": str(built_warehouse.db)})
        assert result.exit_code == 0, f"{line}\n{result.output}"
        if "--out" in args:
            out = Path(args[args.index("--out") + 1])
            # paper, sciexplore and site write a directory (its index.html), export a data/ tree, the others one page
            if args[1] == "export":
                assert any((out / "data").rglob("*.json")), line
            else:
                assert (out / "index.html").is_file() if args[1] in ("paper", "sciexplore", "site") else out.is_file(), line
        else:
            assert result.output.strip(), line

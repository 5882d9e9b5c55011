"""`agenthop-dbt`: run dbt on the AgentHop project from any folder, including a wheel install.

From a clone, plain `dbt build` in the repository root works (profiles.yml ships there). This command
works from anywhere: it finds the dbt project (the clone's, or the one an installed wheel carries in
`agenthop/dbt_project/`), points dbt's profiles at it, passes the warehouse as an absolute path and keeps
dbt's `target/` and `logs/` beside the warehouse file, in `<warehouse folder>/.dbt/<warehouse file
name>/` (docs/ingest.md#building-the-marts), never in the current folder or in site-packages. One target
folder per warehouse keeps dbt's partial parse valid between builds of the same file; the incremental
state itself lives in the warehouse, so a build from any folder is incremental.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click

from agenthop.harness.errors import AgentHopError, cli_errors
from agenthop.harness.storage import LocalPath

DEFAULT_DB = "warehouse/agenthop.duckdb"

#: dbt subcommands that read the project (and so take --project-dir, --target-path, ...)
PROJECT_COMMANDS = frozenset({"build", "run", "test", "seed", "compile", "parse", "ls", "list", "docs", "show",
                              "snapshot", "source", "run-operation"})


def dbt_project_dir() -> Path:
    """The directory holding dbt_project.yml: env override, then a source checkout, then the wheel."""
    override = os.environ.get("AGENTHOP_DBT_PROJECT_DIR")
    candidates = [Path(override)] if override else []
    package_root = Path(__file__).resolve().parents[1]  # repo root (editable) or site-packages/agenthop
    candidates += [package_root, package_root / "dbt_project"]
    for cand in candidates:
        if (cand / "dbt_project.yml").is_file():
            return cand
    raise AgentHopError(
        "cannot find the AgentHop dbt project (dbt_project.yml); set AGENTHOP_DBT_PROJECT_DIR "
        f"(looked in: {', '.join(str(c) for c in candidates)})"
    )


def warehouse_path(db: str | Path | None) -> Path:
    return Path(db or os.environ.get("AGENTHOP_DB") or DEFAULT_DB).expanduser().resolve()


def dbt_workdir(db: Path) -> Path:
    """Where dbt's `target/` and `logs/` go for the warehouse file `db`: beside it, one folder per file."""
    return db.parent / ".dbt" / db.name


def dbt_command(args: list[str], db: Path, workdir: Path | None = None) -> list[str]:
    """The dbt command line for `args` on the warehouse `db`; dbt's target and logs in `workdir`
    (default: dbt_workdir(db)) unless `args` name their own."""
    project = dbt_project_dir()
    work = workdir if workdir is not None else dbt_workdir(db)
    dbt = Path(sys.executable).with_name("dbt")
    base = [str(dbt) if dbt.exists() else "dbt", *args]
    if any(a in PROJECT_COMMANDS for a in args):
        given = {a.split("=")[0] for a in args if a.startswith("--")}
        for flag, value in (("--project-dir", project), ("--profiles-dir", project),
                            ("--target-path", work / "target"), ("--log-path", work / "logs")):
            if flag not in given:
                base += [flag, str(value)]
    return base


def dbt_env(db: Path) -> dict[str, str]:
    """The environment of a dbt run on `db` (the profile reads AGENTHOP_DB; no usage statistics sent)."""
    return dict(os.environ, AGENTHOP_DB=str(db), DO_NOT_TRACK="1", DBT_SEND_ANONYMOUS_USAGE_STATS="False")


def existing_warehouse(db: str | Path | None) -> Path:
    path = warehouse_path(db)
    if not path.exists():
        raise AgentHopError(f"warehouse {path} does not exist: load data first with agenthop-ingest")
    return path


@click.command(context_settings={"ignore_unknown_options": True, "help_option_names": ["-h", "--help"]})
@click.option("--db", type=LocalPath(dir_okay=False), help="Warehouse file (default $AGENTHOP_DB or warehouse/agenthop.duckdb).")
@click.argument("dbt_args", nargs=-1, type=click.UNPROCESSED)
@cli_errors
def main(db: str | None, dbt_args: tuple[str, ...]) -> None:
    """Run dbt (default: `build`) on the AgentHop models against the warehouse, from any folder.

    dbt's target/ and logs/ go beside the warehouse file, in <its folder>/.dbt/<its name>/.
    """
    args = list(dbt_args) or ["build"]
    path = existing_warehouse(db)
    proc = subprocess.run(dbt_command(args, path), env=dbt_env(path))
    sys.exit(proc.returncode)

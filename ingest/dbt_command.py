"""`agenthop-dbt`: run dbt on the packaged AgentHop project from anywhere, including a wheel install.

From a clone, plain `dbt build` in the repository root works (profiles.yml ships there). From an
installed wheel there is no repository: this command finds the dbt project that the wheel carries
(`agenthop/dbt_project/`), points dbt's profiles at it, keeps dbt's `target/` and `logs/` in the
current directory (site-packages may be read-only) and passes the warehouse as an absolute path.
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


def warehouse_path(db: str | None) -> Path:
    return Path(db or os.environ.get("AGENTHOP_DB") or DEFAULT_DB).expanduser().resolve()


def dbt_command(args: list[str], db: Path, workdir: Path) -> list[str]:
    project = dbt_project_dir()
    dbt = Path(sys.executable).with_name("dbt")
    base = [str(dbt) if dbt.exists() else "dbt", *args]
    if args and args[0] in {"build", "run", "test", "seed", "compile", "parse", "ls", "list", "docs", "show"}:
        base += [
            "--project-dir", str(project), "--profiles-dir", str(project),
            "--target-path", str(workdir / "target"), "--log-path", str(workdir / "logs"),
        ]
    return base


@click.command(context_settings={"ignore_unknown_options": True, "help_option_names": ["-h", "--help"]})
@click.option("--db", type=LocalPath(dir_okay=False), help="Warehouse file (default $AGENTHOP_DB or warehouse/agenthop.duckdb).")
@click.argument("dbt_args", nargs=-1, type=click.UNPROCESSED)
@cli_errors
def main(db: str | None, dbt_args: tuple[str, ...]) -> None:
    """Run dbt (default: `build`) on the packaged AgentHop models against the warehouse."""
    args = list(dbt_args) or ["build"]
    path = warehouse_path(db)
    if not path.exists():
        raise AgentHopError(f"warehouse {path} does not exist: load data first with agenthop-ingest")
    env = dict(os.environ, AGENTHOP_DB=str(path), DO_NOT_TRACK="1", DBT_SEND_ANONYMOUS_USAGE_STATS="False")
    proc = subprocess.run(dbt_command(args, path, Path.cwd()), env=env)
    sys.exit(proc.returncode)

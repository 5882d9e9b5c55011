"""Packaging: the design-card folders install as `agenthop.*` subpackages, editable and as a wheel,
and the wheel carries the dbt project so `agenthop-dbt` works without a clone."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PY_FOLDERS = ("harness", "ingest", "reports", "schemas")


def _pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text())


def test_every_python_package_is_mapped_into_the_namespace() -> None:
    cfg = _pyproject()["tool"]["setuptools"]
    listed, mapping = set(cfg["packages"]), cfg["package-dir"]
    found = set()
    for top in PY_FOLDERS:
        for init in (REPO / top).rglob("__init__.py"):
            rel = init.parent.relative_to(REPO)
            if "__pycache__" in rel.parts:
                continue
            name = "agenthop." + ".".join(rel.parts)
            found.add(name)
            assert name in listed, f"{rel} is a package but {name} is not in [tool.setuptools] packages"
            assert mapping.get(name) == rel.as_posix(), f"package-dir for {name} must be {rel.as_posix()!r}"
    assert found, "no packages found"


def test_editable_install_imports_from_the_working_tree() -> None:
    import agenthop.harness
    import agenthop.schemas

    assert Path(agenthop.harness.__file__).resolve() == REPO / "harness" / "__init__.py"
    assert Path(agenthop.schemas.__file__).resolve().parent == REPO / "schemas"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(REPO)],
        capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    (whl,) = out.glob("*.whl")
    return whl


def test_wheel_contains_namespace_packages_and_dbt_project(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "agenthop/harness/__init__.py" in names
    assert "agenthop/dbt_project/dbt_project.yml" in names
    assert "agenthop/dbt_project/profiles.yml" in names
    assert any(n.startswith("agenthop/dbt_project/models_sql/marts/") and n.endswith(".sql") for n in names)
    assert not any(n.split("/")[0] in PY_FOLDERS for n in names), "a generic top-level name leaked into the wheel"


def test_installed_wheel_finds_its_dbt_project_and_parses(wheel: Path, tmp_path: Path) -> None:
    target = tmp_path / "site"
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    env = dict(os.environ, PYTHONPATH=str(target), DO_NOT_TRACK="1", AGENTHOP_DB=str(tmp_path / "w.duckdb"))
    code = (
        "import agenthop.harness, agenthop.ingest.dbt_command as d;"
        "print(agenthop.harness.__file__); print(d.dbt_project_dir())"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    harness_file, project = proc.stdout.split()
    assert harness_file.startswith(str(target)), harness_file
    assert Path(project) == target / "agenthop" / "dbt_project"
    parse = subprocess.run(
        [str(Path(sys.executable).with_name("dbt")), "parse", "--project-dir", project, "--profiles-dir", project,
         "--target-path", str(tmp_path / "target"), "--log-path", str(tmp_path / "logs")],
        capture_output=True, text=True, env=env, cwd=tmp_path,
    )
    assert parse.returncode == 0, parse.stdout[-3000:]

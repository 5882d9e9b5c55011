"""Packaging: the design-card folders install as `agenthop.*` subpackages, editable and as a wheel,
and the wheel carries the dbt project so `agenthop-dbt` works without a clone."""

from __future__ import annotations

import json
import os
import shutil
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


def test_src_layout_links_every_design_card_folder() -> None:
    """src/agenthop/ is a plain src layout made of links to the top-level folders and the dbt project."""
    src = REPO / "src" / "agenthop"
    for top in (*PY_FOLDERS, "docs"):  # docs ship too: report captions link to them
        link = src / top
        assert link.is_symlink() and link.resolve() == REPO / top, f"src/agenthop/{top} must link to {top}/"
    for name in ("dbt_project.yml", "profiles.yml", "selectors.yml", "models_sql", "dbt_support"):
        link = src / "dbt_project" / name
        assert link.is_symlink() and link.resolve() == REPO / name, f"src/agenthop/dbt_project/{name} must link to {name}"
    cfg = _pyproject()["tool"]["setuptools"]
    assert cfg["packages"]["find"]["where"] == ["src"] and "package-dir" not in cfg


_BUILD_WITH_WARNINGS_RECORDED = """
import json, sys, warnings
import setuptools.build_meta as backend
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    getattr(backend, sys.argv[1])(sys.argv[2])
print(json.dumps([f"{w.category.__name__}: {str(w.message).splitlines()[0]}" for w in caught
                  if "setuptools" in w.filename or "agenthop" in str(w.message)]))
"""


@pytest.mark.parametrize("hook", ["build_editable", "build_wheel"])
def test_build_backend_emits_no_warning(hook: str, tmp_path: Path) -> None:
    """What pip prints during `pip install -e .` or a wheel build: the backend's warnings. There must be none."""
    proc = subprocess.run([sys.executable, "-c", _BUILD_WITH_WARNINGS_RECORDED, hook, str(tmp_path)],
                          capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []
    assert list(tmp_path.glob("*.whl"))


def test_editable_install_imports_from_the_working_tree() -> None:
    import agenthop.harness
    import agenthop.schemas

    assert Path(agenthop.harness.__file__).resolve() == REPO / "harness" / "__init__.py"
    assert Path(agenthop.harness.__file__).parent.parent == REPO / "src" / "agenthop"
    assert Path(agenthop.schemas.__file__).resolve().parent == REPO / "schemas"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    # setuptools' scratch folder (git-ignored) keeps files of earlier builds: a model moved since then
    # would come back in the wheel as a second copy
    shutil.rmtree(REPO / "build", ignore_errors=True)
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(REPO)],
        capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Warning" not in proc.stderr, proc.stderr[-3000:]
    (whl,) = out.glob("*.whl")
    return whl


def test_wheel_contains_namespace_packages_and_dbt_project(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "agenthop/harness/__init__.py" in names
    assert "agenthop/dbt_project/dbt_project.yml" in names
    assert "agenthop/dbt_project/profiles.yml" in names
    assert "agenthop/dbt_project/selectors.yml" in names  # the default selection (no unit tests)
    assert "agenthop/docs/metrics.md" in names, "report captions link to the shipped docs"
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

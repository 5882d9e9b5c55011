"""The official validators of the interchange formats, for the tests (docs/interchange.md#validating).

Every Eval Ever's ``every_eval_ever validate`` needs Python >= 3.12: :func:`eee_validator` makes a virtual
environment of its own on a Python 3.12 of this machine (``python3.12`` on PATH, else pyenv's) with the
pinned package from the package registry, cached by version under ``$AGENTHOP_VALIDATOR_CACHE`` (default
``~/.cache/agenthop/validators``), never in the project's environment. When no Python 3.12 or no package
can be had, it returns the reason and the tests that need it skip with it; the EEE files are then still
checked against EEE's published JSON Schemas (schemas/eee/). ATIF is checked in this process with
Harbor's published trajectory models (tests/fixtures/interchange/harbor_models/, pydantic only).
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

EEE_PIN = "every-eval-ever==0.3.0"
HARBOR_PIN = "harbor==0.25.0"
#: run by the validators' Python 3.12: Harbor's own validator on every file named, one line per invalid file
HARBOR_SCRIPT = """
import sys
from harbor.utils.trajectory_validator import TrajectoryValidator
bad = 0
for path in sys.argv[1:]:
    v = TrajectoryValidator()
    if not v.validate(path):
        bad += 1
        print(path, v.get_errors())
sys.exit(1 if bad else 0)
"""
HARBOR_MODELS = Path(__file__).resolve().parent / "fixtures" / "interchange" / "harbor_models"


@dataclass(frozen=True)
class EeeValidator:
    cli: Path | None
    reason: str = ""

    def run(self, files: Sequence[Path]) -> subprocess.CompletedProcess[str]:
        """``every_eval_ever validate --format json FILE...`` (files, never folders)."""
        assert self.cli is not None, self.reason
        return subprocess.run([str(self.cli), "validate", "--format", "json", *map(str, files)],
                              capture_output=True, text=True, timeout=600)


def _python312() -> str | None:
    """A working Python 3.12 interpreter: pyenv's, else ``python3.12`` on PATH (a pyenv shim may name one
    that is not selected, so each candidate is asked for its version)."""
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates = sorted(glob.glob(str(root / "versions" / "3.12*" / "bin" / "python3.12")), reverse=True)
    on_path = shutil.which("python3.12")
    for cand in [*candidates, *([on_path] if on_path else [])]:
        probe = subprocess.run([cand, "-c", "import sys; print(sys.version_info[:2] == (3, 12))"],
                               capture_output=True, text=True)
        if probe.returncode == 0 and probe.stdout.strip() == "True":
            return cand
    return None


def eee_validator() -> EeeValidator:
    cache = Path(os.environ.get("AGENTHOP_VALIDATOR_CACHE", Path.home() / ".cache" / "agenthop" / "validators"))
    venv = cache / EEE_PIN.replace("==", "-")
    cli, done = venv / "bin" / "every_eval_ever", venv / ".installed"
    if done.exists() and cli.exists():
        return EeeValidator(cli)
    python = _python312()
    if python is None:
        return EeeValidator(None, "no Python 3.12 on this machine (every-eval-ever 0.3.0 requires Python >= 3.12)")
    shutil.rmtree(venv, ignore_errors=True)  # a half-made one
    venv.parent.mkdir(parents=True, exist_ok=True)
    made = subprocess.run([python, "-m", "venv", str(venv)], capture_output=True, text=True)
    if made.returncode != 0:
        return EeeValidator(None, f"cannot make a Python 3.12 virtual environment: {made.stderr.strip()[-300:]}")
    pip = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                          EEE_PIN], capture_output=True, text=True, timeout=1800)
    if pip.returncode != 0:
        shutil.rmtree(venv, ignore_errors=True)
        return EeeValidator(None, f"{EEE_PIN} cannot be installed here: {pip.stderr.strip()[-300:]}")
    done.write_text(EEE_PIN + "\n")
    return EeeValidator(cli)


def harbor_validator(eee: EeeValidator) -> EeeValidator:
    """Harbor's trajectory validator in the same Python 3.12 environment: ``harbor`` without its dependencies
    (its trajectory models need only pydantic, which every-eval-ever brings); ``cli`` is that Python."""
    if eee.cli is None:
        return EeeValidator(None, eee.reason)
    python, done = eee.cli.parent / "python", eee.cli.parent.parent / ".harbor-installed"
    if not done.exists():
        pip = subprocess.run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps",
                              HARBOR_PIN], capture_output=True, text=True, timeout=1800)
        if pip.returncode != 0:
            return EeeValidator(None, f"{HARBOR_PIN} cannot be installed here: {pip.stderr.strip()[-300:]}")
        done.write_text(HARBOR_PIN + "\n")
    return EeeValidator(python)


def run_harbor(harbor: EeeValidator, files: Sequence[Path]) -> subprocess.CompletedProcess[str]:
    assert harbor.cli is not None, harbor.reason
    return subprocess.run([str(harbor.cli), "-c", HARBOR_SCRIPT, *map(str, files)], capture_output=True, text=True,
                          timeout=600)


def parse_results(stdout: str) -> list[dict[str, Any]]:
    """The per-file objects ``--format json`` printed (one list, or one object per file)."""
    dec, out, i = json.JSONDecoder(), [], 0
    while i < len(stdout):
        rest = stdout[i:].lstrip()
        if not rest:
            break
        value, n = dec.raw_decode(rest)
        i = len(stdout) - len(rest) + n
        out += value if isinstance(value, list) else [value]
    return out


def json_schema_errors(path: Path) -> list[str]:
    """Errors of an EEE file against the published JSON Schemas (each line of a JSONL file)."""
    import jsonschema

    from agenthop.schemas.eee import schema

    if path.suffix == ".jsonl":
        validator = jsonschema.Draft7Validator(schema("instance_level_eval"))
        values = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    else:
        validator = jsonschema.Draft7Validator(schema("eval"))
        values = [json.loads(path.read_text())]
    return [f"{path}: {e.json_path}: {e.message}" for v in values for e in validator.iter_errors(v)]


def atif_errors(path: Path) -> list[str]:
    """Errors of an ATIF file by Harbor's trajectory validator (its published models)."""
    if str(HARBOR_MODELS) not in sys.path:
        sys.path.insert(0, str(HARBOR_MODELS))
    from harbor.utils.trajectory_validator import TrajectoryValidator

    v = TrajectoryValidator()
    return [] if v.validate(path) else [f"{path}: {e}" for e in v.get_errors()]


SCOUT_PIN = "inspect-scout==0.6.1"


def scout_cli() -> EeeValidator:
    """Inspect Scout's ``scout`` command in a virtual environment of its own (Scout 0.6 pins duckdb < 2, which
    the project's environment cannot hold), made with this Python from the package registry and cached by
    version beside the other validators; ``cli`` is the ``scout`` script, or None with the reason."""
    cache = Path(os.environ.get("AGENTHOP_VALIDATOR_CACHE", Path.home() / ".cache" / "agenthop" / "validators"))
    venv = cache / SCOUT_PIN.replace("==", "-")
    cli, done = venv / "bin" / "scout", venv / ".installed"
    if done.exists() and cli.exists():
        return EeeValidator(cli)
    shutil.rmtree(venv, ignore_errors=True)  # a half-made one
    venv.parent.mkdir(parents=True, exist_ok=True)
    made = subprocess.run([sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True)
    if made.returncode != 0:
        return EeeValidator(None, f"cannot make a virtual environment for Scout: {made.stderr.strip()[-300:]}")
    pip = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                          SCOUT_PIN], capture_output=True, text=True, timeout=1800)
    if pip.returncode != 0 or not cli.exists():
        shutil.rmtree(venv, ignore_errors=True)
        return EeeValidator(None, f"{SCOUT_PIN} cannot be installed here: {pip.stderr.strip()[-300:]}")
    done.write_text(SCOUT_PIN + "\n")
    return EeeValidator(cli)

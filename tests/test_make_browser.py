"""``make browser``: when apt cannot install the browser, make still succeeds (the browser tests skip
loudly), and the warning says why, quoting apt's own error (here: its lock held by another process)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LOCKED = "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4242 (apt-get)"


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_browser_prints_why_the_install_failed(tmp_path: Path) -> None:
    fake = tmp_path / "bin"
    fake.mkdir()
    apt = fake / "apt-get"
    apt.write_text(f"#!/bin/sh\necho 'Reading package lists...'\necho '{LOCKED}' >&2\nexit 100\n")
    apt.chmod(0o755)
    for tool in ("tail", "sed", "printf"):  # what the recipe uses besides apt-get; no chromium on this PATH
        if (found := shutil.which(tool)) is not None:
            (fake / tool).symlink_to(found)
    env = {**os.environ, "PATH": str(fake)}
    proc = subprocess.run([shutil.which("make") or "make", "--no-print-directory", "-C", str(REPO), "browser"],
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "WARNING: could not install chromium-headless-shell; browser tests will be SKIPPED" in proc.stdout
    assert f"  | {LOCKED}" in proc.stdout


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_browser_is_quiet_when_apt_succeeds(tmp_path: Path) -> None:
    fake = tmp_path / "bin"
    fake.mkdir()
    apt = fake / "apt-get"
    apt.write_text("#!/bin/sh\necho 'Setting up chromium-headless-shell ...'\nexit 0\n")
    apt.chmod(0o755)
    env = {**os.environ, "PATH": str(fake)}
    proc = subprocess.run([shutil.which("make") or "make", "--no-print-directory", "-C", str(REPO), "browser"],
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0 and proc.stdout == "" and proc.stderr == ""

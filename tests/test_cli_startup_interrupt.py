"""Ctrl-C while ``agenthop-harness`` is still starting (importing its commands and their libraries, or
inside a command before it installs its own handler): one line, exit code 130, no traceback and no
click ``Aborted!`` (docs/running.md). The interrupt is delivered at a fixed point: the process sends
itself SIGINT when it starts importing a given module."""

from __future__ import annotations

import subprocess
import sys

import pytest

DRIVER = """
import importlib.abc, os, signal, sys

# as in a terminal: Python leaves SIGINT ignored when it starts with it ignored (a background job of a
# non-interactive shell, nohup), and then no Ctrl-C reaches the command at all
signal.signal(signal.SIGINT, signal.default_int_handler)
TARGET = sys.argv[1]

class InterruptAt(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == TARGET:
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, InterruptAt())
from agenthop.harness.cli import main
sys.argv = ["agenthop-harness", *sys.argv[2:]]
main()
"""


@pytest.mark.parametrize(("module", "args"), [
    ("agenthop.harness.run_command", ["run", "--help"]),  # the commands' start-up imports
    ("agenthop.harness.runner", ["run", "--model", "verifier", "--dry-run"]),  # inside the command
    ("pyarrow", ["make-benchmark", "--help"]),  # a library a command module loads
])
def test_ctrl_c_during_start_up_is_one_line_and_exit_130(module: str, args: list[str]) -> None:
    proc = subprocess.run([sys.executable, "-c", DRIVER, module, *args], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 130, proc.stderr
    assert "Traceback" not in proc.stderr and "Aborted!" not in proc.stderr, proc.stderr
    assert [line for line in proc.stderr.splitlines() if line.strip()] == ["interrupted (Ctrl-C)"]
    assert proc.stdout == ""


def test_without_an_interrupt_the_commands_are_there() -> None:
    proc = subprocess.run([sys.executable, "-c", DRIVER, "no.such.module", "--help"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert all(c in proc.stdout for c in ("make-benchmark", "describe-benchmark", "run"))

"""Runner: plays (model, condition, replicate) runs over a release and writes them (docs/running.md).

The jobs live in their own modules; this one names what the rest of the harness and its users import:

- harness/run_one.py: ``run_model``, one run in this process (resume, writer, completion);
- harness/sample_driver.py: the asyncio worker tasks that play a run's samples;
- harness/panel_runner.py: ``run_panel``, every run of a panel (pool for sim, one event loop for real);
- harness/process_pool.py: the worker processes of simulated runs;
- harness/run_control.py: Ctrl-C / SIGTERM and what concurrent runs share;
- harness/completion.py: a run is complete exactly when every sample of its scope is final on disk;
- harness/progress.py, harness/run_options.py, harness/run_result.py, harness/cost.py (the cost guard).
"""

from __future__ import annotations

from .completion import missing_samples, run_is_complete
from .panel_runner import endpoint_limiters, run_panel
from .progress import BarProgress, NullProgress, Progress, QueueProgress, progress_postfix
from .run_control import RunControl, StopFlag
from .run_one import run_meta, run_model
from .run_options import FLUSH_DEFAULTS, RunOptions
from .run_result import COMPLETE, COST_CAP, FAILED, INTERRUPTED, SKIPPED, TOKEN_CAP, RunCrashed, RunResult
from .sample_driver import sample_seed

__all__ = [
    "BarProgress", "COMPLETE", "COST_CAP", "FAILED", "FLUSH_DEFAULTS", "INTERRUPTED", "NullProgress", "Progress",
    "QueueProgress", "RunControl", "RunCrashed", "RunOptions", "RunResult", "SKIPPED", "StopFlag", "TOKEN_CAP",
    "endpoint_limiters", "missing_samples", "progress_postfix", "run_is_complete", "run_meta", "run_model",
    "run_panel", "sample_seed",
]

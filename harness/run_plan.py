"""A run's settings that depend on its benchmark: the condition it names, the benchmark's own run
options, and the caps (docs/harness.md#benchmarks-other-than-agenthop).

A benchmark may give each condition caps of its own (``default_caps``: SciExplore's paradigms); the
command line's ``--budget``, ``--max-turns``, ``--max-total-tokens`` and ``--max-sample-seconds``
then override only the caps it names. Benchmarks without per-condition caps use the command line's
(with its defaults), exactly as before, so their run ids do not change.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from . import benchmarks
from .errors import AgentHopError
from .panel import RunSpec
from .run_identity import RunCaps

CAP_NAMES = ("budget", "max_turns", "max_total_tokens", "max_sample_seconds")


def plan_run(run: RunSpec, explicit: Mapping[str, float], options: Mapping[str, Any] | None = None) -> RunSpec:
    """``run`` checked against its benchmark, with its options completed and its own caps when the
    benchmark sets caps per condition (``explicit``: the caps given on the command line)."""
    bench = benchmarks.get(run.benchmark)
    if run.condition not in bench.conditions:
        raise AgentHopError(f"{run.model.name}: {run.condition!r} is not a condition of {bench.name} "
                            f"(one of {', '.join(bench.conditions)})")
    given = {**dict(run.options), **{k: v for k, v in (options or {}).items() if v is not None}}
    if bench.run_options is not None:
        opts = bench.run_options(run.condition, given)
    elif given:
        raise AgentHopError(f"{', '.join('--' + k for k in given)}: benchmark {bench.name} takes no such option")
    else:
        opts = {}
    _check_native_search(run, bench, opts)
    if bench.default_caps is None:
        return replace(run, options=opts)
    caps = {**bench.default_caps(run.condition), **{k: v for k, v in explicit.items() if v is not None}}
    return replace(run, options=opts,
                   caps=RunCaps(int(caps["budget"]), int(caps["max_turns"]), int(caps["max_total_tokens"])),
                   max_sample_seconds=float(caps["max_sample_seconds"]))


def _check_native_search(run: RunSpec, bench: benchmarks.Benchmark, opts: Mapping[str, Any]) -> None:
    """A run that has the provider search on its side needs a backend that can: refused here, before
    any directory exists, rather than by the backend when the first sample starts."""
    from .backends.native_search import refusal

    problem = refusal(bench, run.model.backend, run.condition, opts)
    if problem is not None:
        raise AgentHopError(f"{run.model.name}: {problem}")

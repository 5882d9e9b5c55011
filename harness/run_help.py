"""The help of ``agenthop-harness run``'s options whose meaning depends on the benchmark, built from the
registry (docs/running.md): each benchmark's entry says what its conditions are (``condition_kind``),
describes its own run options (``run_option_docs``), names its simulated archetypes (``policies``) and
sets its caps per condition (``default_caps``), so a new benchmark shows up in ``run --help`` through its
folder and its registry entry alone.

:func:`option_help` is a pure function of the benchmarks it is given; ``run_command``'s options call it
(:func:`registry_help`) when help is shown, with every benchmark that loads, so starting a run imports
no benchmark it does not run.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import click

from . import benchmarks
from .benchmarks import Benchmark
from .run_identity import RunCaps
from .run_options import DEFAULT_MAX_SAMPLE_SECONDS

#: the caps a benchmark may set per condition, with the command line's defaults
CAP_DEFAULTS: dict[str, float] = {"budget": RunCaps.budget, "max_turns": RunCaps.max_turns,
                                  "max_total_tokens": RunCaps.max_total_tokens,
                                  "max_sample_seconds": DEFAULT_MAX_SAMPLE_SECONDS}

#: the benchmarks whose conditions ``--paradigm`` names (``Benchmark.condition_kind``)
PARADIGMS = "paradigms"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _per_condition(benches: Sequence[Benchmark], cap: str) -> str:
    """``; sciexplore's paradigms: foundation 0, search 30`` for every benchmark with caps of its own."""
    parts = []
    for b in benches:
        if b.default_caps is None:
            continue
        values = [(c, b.default_caps(c).get(cap)) for c in b.conditions]
        shown = ", ".join(f"{c} {_number(v)}" for c, v in values if v is not None)
        if shown:
            parts.append(f"{b.name}'s {b.condition_kind}: {shown}")
    return "".join(f"; {p}" for p in parts)


def _archetype_names(bench: Benchmark) -> list[str]:
    """A benchmark's simulated archetypes as ``--model`` takes them (``early_committer`` as early-committer)."""
    return [name.replace("_", "-") for name in bench.policies]


def option_values(benches: Sequence[Benchmark], option: str) -> list[str]:
    """The values of a benchmark run option over every benchmark that has it, in registry order."""
    out: list[str] = []
    for b in benches:
        doc = b.run_option_docs.get(option)
        for v in doc.values if doc is not None else ():
            if v not in out:
                out.append(v)
    return out


def run_examples(bench: Benchmark, data: str = "out/demo/benchmark", out: str = "out/demo/runs") -> tuple[str, ...]:
    """``run --help``'s examples on a release of ``bench`` (the demo's: make-benchmark's default benchmark):
    a panel, one of its archetypes under a second condition, a labelled model of another archetype. The
    archetypes and conditions are the registry entry's, so the core's help names none of them itself."""
    where = f"--data {data} --out {out}"
    lines = [f"agenthop-harness run --panel panels/demo.yaml {where}"]
    archetypes = _archetype_names(bench)
    if archetypes:
        condition = bench.conditions[1] if len(bench.conditions) > 1 else bench.conditions[0]
        other = archetypes[1] if len(archetypes) > 1 else archetypes[0]
        lines += [f"agenthop-harness run --model {archetypes[0]} --condition {condition} {where}",
                  f"agenthop-harness run --model my-{other} --sim-archetype {other} --limit 50 {where}"]
    return tuple(lines)


def option_help(benches: Sequence[Benchmark]) -> dict[str, str]:
    """The help text of each benchmark-dependent option of ``run`` (keyed by parameter name)."""
    names = ", ".join(b.name for b in benches)
    markers = ", ".join(f"{b.name}'s has {b.release_marker}" for b in benches)
    conditions = "; ".join(f"{b.name}'s {b.condition_kind} {', '.join(b.conditions)}" for b in benches)
    with_paradigms = ", ".join(b.name for b in benches if b.condition_kind == PARADIGMS) or "none is registered"
    search = "; ".join(f"{b.name}: {b.run_option_docs['search'].help}" for b in benches
                       if "search" in b.run_option_docs) or "no registered benchmark has it"
    archetypes = "; ".join(f"{b.name}'s {', '.join(_archetype_names(b))}" for b in benches
                           if b.policies) or "none is registered"
    d = CAP_DEFAULTS
    return {
        "model": "Model name: a real model id (its backend detected, see --backend), a simulated archetype of "
                 f"its benchmark ({archetypes}), or any label given --sim-archetype, --model-id or --backend.",
        "data": f"Release directory of a benchmark ({markers}). Required unless --dry-run.",
        "benchmark": f"The benchmark, by registry name ({names}; default: the panel's, else the one --data is "
                     "a release of).",
        "condition": f"Condition of --model, one of its benchmark's (default: its first): {conditions}.",
        "paradigm": f"The same as --condition, for benchmarks whose conditions are paradigms ({with_paradigms}).",
        "search": f"A benchmark's own run option (part of the run identity); {search}.",
        "budget": f"Tool budget points (default {_number(d['budget'])}{_per_condition(benches, 'budget')}).",
        "max_turns": f"Model calls (turns) per attempt (default {_number(d['max_turns'])}"
                     f"{_per_condition(benches, 'max_turns')}).",
        "max_total_tokens": f"Per-sample cumulative token cap (default {_number(d['max_total_tokens'])}"
                            f"{_per_condition(benches, 'max_total_tokens')}).",
        "max_sample_seconds": "Wall-clock seconds a real-backend sample may take over all its attempts; past "
                              "them it ends as terminated_by 'time_limit' (0 = no cap; default: "
                              f"{d['max_sample_seconds']}{_per_condition(benches, 'max_sample_seconds')}).",
    }


@functools.cache
def registry_help() -> dict[str, str]:
    """:func:`option_help` of every benchmark that loads (imported on the first call)."""
    return option_help(benchmarks.available())


class RegistryHelpOption(click.Option):
    """A ``run`` option whose help text comes from the registry (:func:`registry_help`), built when the
    help is shown rather than when the command is imported."""

    def __init__(self, *args: Any, help_key: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.help_key = help_key

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        self.help = registry_help()[self.help_key]
        return super().get_help_record(ctx)


class RegistryChoice(click.Choice):
    """The values of a benchmark run option (``--search``) over every benchmark, looked up on first use."""

    def __init__(self, option: str) -> None:  # noqa: D107 - click.Choice's own set-up, values deferred
        self.option = option
        self.case_sensitive = True

    @property  # type: ignore[override]
    def choices(self) -> tuple[str, ...]:
        return tuple(option_values(benchmarks.available(), self.option))

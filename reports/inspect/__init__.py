"""Report sections of imported Inspect tasks (benchmarks ``inspect:<task>``, docs/inspect.md#reports).

The shared sections cover an Inspect eval's runs (compare, reruns across epochs, item pages with the
transcript); an item page opens with the sample as the log carries it: its input, its target and its
metadata (``raw.inspect_items``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..core.registry import Outcomes, Repeats, ReportSections, Section
from ..core.runs import RunInfo
from ..warehouse import Warehouse

ITEMS = "inspect_items"


def _metadata(text: str | None) -> list[tuple[str, str]]:
    if not text:
        return []
    try:
        value = json.loads(text)
    except ValueError:
        return [("metadata", text)]
    if not isinstance(value, dict):
        return [] if value is None else [("metadata", json.dumps(value, ensure_ascii=False))]
    return [(str(k), v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)) for k, v in value.items()]


def item_sections(wh: Warehouse, sample_ids: Sequence[str], runs: Sequence[RunInfo]) -> dict[str, Section]:
    """Per item: the sample's input, target and metadata as the log recorded them."""
    if not sample_ids or not runs or not wh.has_table("raw", ITEMS):
        return {}
    rows = wh.rows(
        f"SELECT sample_id, input, target, metadata_json FROM raw.{ITEMS} WHERE benchmark = ? "
        "AND sample_id = ANY(?)", [runs[0].benchmark, list(sample_ids)])
    return {r["sample_id"]: Section(title="", template="inspect_item_header.html.j2",
                                    context={**r, "metadata": _metadata(r.get("metadata_json"))})
            for r in rows}


#: an Inspect score of 1 is what its scorer gave, not a right answer (a security "C" is the bad outcome)
SCORED = Outcomes(right="scored 1", got_right="scored 1", wrong="scored 0", correct="scored 1", correctness="score (1 or 0)",
                  judged="that scored 1")


def metadata_clusters(wh: Warehouse, benchmark: str, name: str) -> dict[str, str]:
    """``--cluster NAME``: the value of the sample metadata's field NAME (text as is, other JSON as JSON); a
    field no sample of the task carries is a user error."""
    from agenthop.harness.errors import AgentHopError

    out: dict[str, str] = {}
    if wh.has_table("raw", ITEMS):
        for sid, text in wh.con.execute(f"SELECT sample_id, metadata_json FROM raw.{ITEMS} WHERE benchmark = ?",
                                        [benchmark]).fetchall():
            value = dict(_metadata(text)).get(name)
            if value is not None:
                out[str(sid)] = value
    if not out:
        raise AgentHopError(f"--cluster {name}: no sample of {benchmark} has the metadata field {name!r} "
                            "(fields are listed on its item pages)")
    return out


#: no default: an Inspect task's samples are clustered only by a metadata field named with --cluster
SECTIONS = ReportSections(name="inspect:", item=item_sections, repeats=Repeats("epoch", "epochs", 1),
                          outcomes=SCORED, items="samples", cluster_labels=metadata_clusters)

__all__ = ["SECTIONS", "item_sections", "metadata_clusters"]

"""Scatter labels (the leaderboard's accuracy vs recall, the paper's Figure 5) never overlap: each label's
estimated box is kept apart from every other label and from every point, inside the plot; a point whose
label has no room is left unlabelled and named in the chart's subtitle instead of being drawn over another.
"""

from __future__ import annotations

import random

from agenthop.reports import charts
from agenthop.reports.charts import SCATTER_HEIGHT, SCATTER_WIDTH, place_labels, scatter_note


def _intersect(a, b) -> bool:  # type: ignore[no-untyped-def]
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _crowded(n: int, seed: int = 7) -> list[tuple[float, float, str]]:
    """n models bunched like a real panel: most between 60% and 90% on both axes, names of 8-30 characters."""
    rng = random.Random(seed)
    names = ["claude-3-5-sonnet-20241022", "gpt-4o-2024-08-06", "gemini-2.0-flash", "llama-3.3-70b", "qwen2.5-72b"]
    return [(rng.uniform(0.6, 0.9), rng.uniform(0.6, 0.9), f"{names[i % len(names)]}-{i}") for i in range(n)]


def test_seventy_labels_never_intersect_and_the_rest_are_named() -> None:
    pts = _crowded(70)
    domain = (0.55, 0.95)
    labels, missing = place_labels(pts, width=SCATTER_WIDTH, height=SCATTER_HEIGHT, x_domain=domain, y_domain=domain)
    assert sorted([*labels, *missing]) == list(range(70)) and not set(labels) & set(missing)
    assert len(labels) >= 20 and missing  # crowded: many labelled, some left out
    boxes = {i: lab.box for i, lab in labels.items()}
    for i, a in boxes.items():
        assert 0 <= a[0] < a[2] <= SCATTER_WIDTH and 0 <= a[1] < a[3] <= SCATTER_HEIGHT, (i, a)
        for j, b in boxes.items():
            assert i == j or not _intersect(a, b), (pts[i][2], pts[j][2], a, b)
    # no label covers a point (its own or another's): the marker's box, 5 px around its centre
    for i, (x, y, _) in enumerate(pts):
        cx = (x - domain[0]) / (domain[1] - domain[0]) * SCATTER_WIDTH
        cy = SCATTER_HEIGHT - (y - domain[0]) / (domain[1] - domain[0]) * SCATTER_HEIGHT
        marker = (cx - 5, cy - 5, cx + 5, cy + 5)
        assert not any(_intersect(marker, b) for b in boxes.values()), pts[i][2]
    # a label's box is as wide as its text estimate: wider than the rendered text (about 0.5 em per character)
    for i, lab in labels.items():
        assert lab.box[2] - lab.box[0] >= 0.6 * charts.LABEL_FONT * len(pts[i][2])


def test_labels_sit_on_their_point_or_are_joined_to_it() -> None:
    pts = [(0.80, 0.50, "gamma"), *((0.30, 0.30, f"tied-{i}") for i in range(6))]  # six models on one spot
    labels, missing = place_labels(pts, width=600, height=420, x_domain=(0.2, 0.9), y_domain=(0.2, 0.9))
    assert missing == [] and sorted(labels) == list(range(7))
    assert labels[0].align == "left" and not labels[0].line  # alone: right beside its point
    assert sum(lab.line for lab in labels.values()) >= 2  # the tied ones: set off, each with a leader line


def test_the_leaderboard_scatter_names_its_unlabelled_points() -> None:
    pts = _crowded(70)
    rows = [{"run": n, "paper_recall": x, "accuracy": y, "tier": "Closed Frontier", "kind": "simulated"}
            for x, y, n in pts]
    spec = charts.scatter(rows, x="paper_recall", y="accuracy", x_title="recall", y_title="accuracy", color="tier",
                          title="Accuracy vs paper recall")
    data = next(layer["data"]["values"] for layer in spec["layer"] if "align" in layer["data"]["values"][0])
    unlabelled = [d["run"] for d in data if not d["align"]]
    assert unlabelled and len(unlabelled) < 70
    subtitle = " ".join(spec["title"]["subtitle"])
    assert all(name in subtitle for name in unlabelled)
    assert scatter_note([]) == []

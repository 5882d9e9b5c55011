"""`make bench` stage: `agenthop-report site` of a leaderboard of 50 models x 5 epochs x 10,000 items.

bench/site_corpus.py writes the warehouse (one Inspect task, a run per model and epoch, five messages
and one tool call per sample) and `dbt build` makes its marts; both are kept out of the timed stage
and reused when a warehouse of the same size exists. Then, measured as a subprocess (wall, CPU, peak
RSS of the process tree): ``site_large``, `agenthop-report site --out DIR`. Its row gives the site's
size on disk (the files' bytes, and the blocks they take), its files and item pages, and the time its
index takes to open in headless Chromium from ``file://`` with the network blocked (the load event,
best of three), and an item of the largest reruns page (its viewer and data file).

Targets: build ≤ 120 s, index open ≤ 2 s, site ≤ 200 MB.

    .venv/bin/python bench/site_large.py [--models 50 --epochs 5 --items 10000] [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import StageResult, dir_bytes, run_stage  # noqa: E402
import site_corpus  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
MODELS, EPOCHS, ITEMS = 50, 5, 10_000
MAX_BUILD_S = 120.0
MAX_OPEN_S = 2.0
MAX_BYTES = 200 * 1000 * 1000
BROWSERS = ("/usr/bin/chromium-headless-shell", "/usr/bin/chromium", "/usr/lib/chromium/chromium")


def disk_bytes(path: Path) -> int:
    """The bytes the files under `path` take on disk (allocated blocks, as `du` counts them)."""
    return sum(p.stat().st_blocks * 512 for p in path.rglob("*") if p.is_file())


def _browser() -> str | None:
    return next((b for b in BROWSERS if Path(b).exists()), shutil.which("chromium-headless-shell"))


def open_times(urls: list[str], repeats: int = 3) -> list[float | None]:
    """Seconds from navigation to the load event of each URL in headless Chromium, offline (best of
    `repeats`, a new page each time); for an item viewer's URL, until its item is laid out. None without
    a browser."""
    exe = _browser()
    if exe is None:
        return [None for _ in urls]
    from playwright.sync_api import sync_playwright

    out: list[float | None] = []
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=["--no-sandbox", "--disable-gpu"])
        try:
            for url in urls:
                best = None
                for _ in range(repeats):
                    page = b.new_page(viewport={"width": 1280, "height": 900})
                    page.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file:") else r.abort())
                    t0 = time.perf_counter()
                    page.goto(url, wait_until="load", timeout=120_000)
                    if "#" in url:  # an item: until the viewer has laid it out (its data inflated)
                        page.wait_for_selector("body[data-item-ready]", timeout=120_000)
                        took = time.perf_counter() - t0
                    else:
                        took = page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd") / 1000
                    best = took if best is None else min(best, took)
                    page.close()
                out.append(round(best, 3) if best is not None else None)
        finally:
            b.close()
    return out


def _largest_item(site: Path) -> str | None:
    """The viewer URL of the first item of the reruns page with the most data."""
    pages = sorted(site.glob("reruns/*/*.html"), key=lambda p: -dir_bytes(p.with_name(p.stem + "_files")))
    for page in pages:
        text = page.read_text(encoding="utf-8")
        i = text.find('view.html#')
        if i >= 0:
            start = text.rfind('"', 0, i) + 1
            href = text[start:text.find('"', i)]
            viewer, _, name = href.partition("#")
            return (page.parent / viewer).resolve().as_uri() + "#" + name
    return None


def warehouse(work: Path, models: int, epochs: int, items: int) -> tuple[Path, dict[str, float]]:
    """The built warehouse of this size under `work` (written and built when missing)."""
    db = work / f"site_{models}x{epochs}x{items}_v{site_corpus.VERSION}.duckdb"
    done = db.with_suffix(".built")
    if db.exists() and done.exists():
        return db, json.loads(done.read_text())
    db.unlink(missing_ok=True)
    times = site_corpus.build(db, models=models, epochs=epochs, items=items)
    times["dbt_build"] = site_corpus.dbt_build(db, work)
    done.write_text(json.dumps(times))
    return db, times


def measure(work: Path, models: int = MODELS, epochs: int = EPOCHS, items: int = ITEMS,
            env: dict[str, str] | None = None) -> list[StageResult]:
    env = dict(env or os.environ)
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    db, times = warehouse(work, models, epochs, items)
    out = work / "site"
    if out.exists():
        shutil.rmtree(out)
    r = run_stage("site_large", [str(BIN / "agenthop-report"), "site", "--db", str(db), "--out", str(out), "--quiet"],
                  env=dict(env, AGENTHOP_DB=str(db)), cwd=work, log=work / "site_large.log")
    files = [p for p in out.rglob("*") if p.is_file()] if out.exists() else []
    index_s, item_s = (open_times([(out / "index.html").resolve().as_uri(), _largest_item(out) or ""])
                       if r.returncode == 0 else (None, None))
    r.extra.update(models=models, epochs=epochs, items=items, bytes_written=dir_bytes(out), disk_bytes=disk_bytes(out),
                   files=len(files), viewers=sum(p.name.startswith("view") and p.suffix == ".html" for p in files),
                   data_files=sum(p.parent.name.endswith("-data") for p in files),
                   index_open_s=index_s, item_open_s=item_s, corpus_s={k: round(v, 1) for k, v in times.items()},
                   setup_s=round(time.perf_counter() - t0 - r.wall_s, 1), load_average=os.getloadavg())
    return [r]


def summary(r: StageResult) -> str:
    """The bench table's words for this stage."""
    e = r.extra
    return (f"{e['models']} models x {e['epochs']} epochs x {e['items']:,} items: {e['files']:,} files "
            f"({e['viewers']} item viewers, {e['data_files']:,} item data files), {e['disk_bytes'] / 1e6:.1f} MB on disk; "
            f"index opens in {e['index_open_s']} s, an item in {e['item_open_s']} s (headless Chromium, file://)")


def verdicts(results: list[StageResult]) -> list[str]:
    missed = []
    for r in results:
        if r.name != "site_large":
            continue
        if r.returncode != 0:
            missed.append(f"{r.name}: failed with exit code {r.returncode}")
            continue
        full = (r.extra.get("models"), r.extra.get("epochs"), r.extra.get("items")) == (MODELS, EPOCHS, ITEMS)
        if r.wall_s > MAX_BUILD_S:
            missed.append(f"{r.name}: {r.wall_s:.1f} s > {MAX_BUILD_S:g} s")
        size = max(int(r.extra.get("bytes_written", 0)), int(r.extra.get("disk_bytes", 0)))
        if size > MAX_BYTES:
            missed.append(f"{r.name}: {size / 1e6:.1f} MB > {MAX_BYTES / 1e6:g} MB")
        opened = r.extra.get("index_open_s")
        if opened is None:
            missed.append(f"{r.name}: the index was not opened (no headless Chromium)")
        elif float(opened) > MAX_OPEN_S:
            missed.append(f"{r.name}: index opens in {opened} s > {MAX_OPEN_S:g} s")
        if not full:
            missed.append(f"{r.name}: measured at {r.extra.get('models')} x {r.extra.get('epochs')} x "
                          f"{r.extra.get('items')}, not {MODELS} x {EPOCHS} x {ITEMS:,}")
    return missed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, default=MODELS)
    ap.add_argument("--epochs", type=int, default=EPOCHS)
    ap.add_argument("--items", type=int, default=ITEMS)
    ap.add_argument("--work", type=Path, default=REPO / "out" / "bench" / "site_large")
    args = ap.parse_args()
    env = dict(os.environ, DO_NOT_TRACK="1", DBT_SEND_ANONYMOUS_USAGE_STATS="False")
    results = measure(args.work.resolve(), args.models, args.epochs, args.items, env)
    print(json.dumps({"stages": [r.as_dict() for r in results], "summary": [summary(r) for r in results if r.returncode == 0],
                      "missed": verdicts(results)}, indent=1, default=str))
    return 0 if all(r.returncode == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())

"""Run a reading step under a memory limit: the address space this process already uses plus
HEADROOM, so the bound holds whatever the interpreter, Arrow and DuckDB reserved before.

``python memory_cap.py outcomes OUT.json LOG...``: each log through both readers (their tables as
JSON rows, or the refusal); ``python memory_cap.py ingest ARGS...``: ``agenthop-ingest ARGS`` with
the limit set just before the Inspect logs are read.
"""

from __future__ import annotations

import json
import resource
import sys
from pathlib import Path
from typing import Any

HEADROOM = 768 << 20


def cap() -> None:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            limit = int(line.split()[1]) * 1024 + HEADROOM
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            return
    raise RuntimeError("no VmSize in /proc/self/status")


def outcome(path: Path, reader: str) -> dict[str, Any]:
    from agenthop.ingest.conform import IngestError
    from agenthop.ingest.sources import inspect_import

    try:
        lt = inspect_import.read_log(path, reader=reader)
    except IngestError as exc:
        return {"refused": str(exc)}
    except BaseException as exc:  # the test reports what escaped
        return {"crashed": f"{type(exc).__name__}: {str(exc)[:300]}"}
    tables: dict[str, list[Any]] = {}
    for rd in lt.runs:
        for name, t in rd.tables.items():
            tables.setdefault(name, []).extend(t.to_pylist())
    tables["items"] = lt.items.to_pylist() if lt.items is not None else []
    return {"tables": tables}


def outcomes(out: Path, logs: list[str]) -> None:
    import inspect_ai.log  # noqa: F401  (imported before the limit is set)

    from agenthop.ingest.sources import inspect_import  # noqa: F401

    cap()
    result = {log: {reader: outcome(Path(log), reader) for reader in ("builtin", "inspect")} for log in logs}
    out.write_text(json.dumps(result, default=str, allow_nan=True))


def ingest(args: list[str]) -> None:
    from agenthop.ingest.cli import main
    from agenthop.ingest.sources import inspect_ingest

    prepare = inspect_ingest.prepare

    def capped(*a: Any, **k: Any) -> Any:
        cap()
        return prepare(*a, **k)

    inspect_ingest.prepare = capped  # type: ignore[assignment]
    main(args)


if __name__ == "__main__":
    if sys.argv[1] == "outcomes":
        outcomes(Path(sys.argv[2]), sys.argv[3:])
    else:
        ingest(sys.argv[2:])

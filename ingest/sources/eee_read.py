"""``agenthop-ingest --eee PATH``: find and check Every Eval Ever files (docs/interchange.md#importing).

An aggregate record (``<uuid>.json``) is checked against EEE's published JSON Schema (schemas/eee/),
then its instance-level companion (``<uuid>_samples.jsonl``, named by
``detailed_evaluation_results.file_path``) line by line: the checksum and row count the aggregate
states, each line's schema, its evaluation id and model id, that its evaluation is one of the
aggregate's, and that no (evaluation result, sample, epoch, attempt) repeats. Each problem is an
IngestError of one line naming the file, the line and the field.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agenthop.ingest.conform import IngestError
from agenthop.schemas import eee as eee_schema

from .interchange_json import discover as find_json, field_path, line_of, read_json, read_jsonl

SAMPLES_SUFFIX = "_samples.jsonl"


@dataclass
class EeeFile:
    path: Path
    record: dict[str, Any]
    #: (line, instance record) of its companion file (empty: an aggregate without instances)
    instances: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    samples_path: Path | None = None
    content_sha256: str = ""

    @property
    def uuid(self) -> str:
        return self.path.stem


def discover(paths: Sequence[Path]) -> list[Path]:
    """The aggregate files below ``paths`` (a file itself, or every ``*.json`` of a folder), sorted."""
    return find_json(paths, "--eee", SAMPLES_SUFFIX)


def _validator(name: str) -> Any:
    import jsonschema

    schema = eee_schema.schema(name)
    return jsonschema.Draft7Validator(schema, format_checker=None)


def check_schema(value: Any, name: str, path: Path, text: str | None = None, line: int | None = None) -> None:
    """IngestError at the first schema violation (the one deepest in the record's order)."""
    errors = sorted(_validator(name).iter_errors(value), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    if not errors:
        return
    err = errors[0]
    parts = list(err.absolute_path)
    if err.validator == "required" or err.validator == "additionalProperties":
        extra = err.message
    else:
        extra = err.message if len(err.message) <= 160 else err.message[:157] + "..."
    at = line_of(text, parts, line)
    raise IngestError(f"{path}: line {at}: field {field_path(parts)}: {extra} (EEE schema {eee_schema.VERSION})")


def _companion(path: Path, record: dict[str, Any]) -> Path | None:
    detail = record.get("detailed_evaluation_results")
    if not detail:
        sibling = path.with_name(path.stem + SAMPLES_SUFFIX)
        if sibling.exists():
            raise IngestError(f"{path}: line 1: field detailed_evaluation_results: missing, but {sibling.name} "
                              "lies beside the record")
        return None
    name = Path(str(detail["file_path"])).name
    return path.with_name(name)


def _check_checksum(path: Path, record: dict[str, Any], text: str, samples: Path, data: bytes, n_rows: int) -> None:
    detail = record["detailed_evaluation_results"]
    algo = detail.get("hash_algorithm") or "sha256"
    stated = detail.get("checksum")
    if stated:
        actual = hashlib.new(algo, data).hexdigest()
        if actual != str(stated).lower():
            raise IngestError(f"{path}: line {line_of(text, ['checksum'], None)}: field "
                              f"detailed_evaluation_results.checksum: {algo} {stated} disagrees with {samples.name} "
                              f"({actual})")
    total = detail.get("total_rows")
    if total is not None and total != n_rows:
        raise IngestError(f"{path}: line {line_of(text, ['total_rows'], None)}: field "
                          f"detailed_evaluation_results.total_rows: {total}, but {samples.name} has {n_rows} rows")


def _instance_key(inst: dict[str, Any]) -> tuple[str, str, str, str]:
    meta = inst.get("metadata") if isinstance(inst.get("metadata"), dict) else {}
    return (str(inst.get("evaluation_result_id") or inst["evaluation_name"]), str(inst["sample_id"]),
            str(meta.get("epoch", "")), str(meta.get("attempt", "")))


def _check_instances(rec: dict[str, Any], samples: Path, rows: list[tuple[int, Any]]) -> None:
    result_ids = {r.get("evaluation_result_id") for r in rec["evaluation_results"]} - {None}
    names = {r["evaluation_name"] for r in rec["evaluation_results"]}
    model_id = rec["model_info"]["id"]
    seen: dict[tuple[str, str, str, str], int] = {}
    for n, inst in rows:
        check_schema(inst, "instance_level_eval", samples, line=n)
        if inst["evaluation_id"] != rec["evaluation_id"]:
            raise IngestError(f"{samples}: line {n}: field evaluation_id: {inst['evaluation_id']!r} is not the "
                              f"aggregate's {rec['evaluation_id']!r}")
        if inst["model_id"] != model_id:
            raise IngestError(f"{samples}: line {n}: field model_id: {inst['model_id']!r} is not the aggregate's "
                              f"model {model_id!r}")
        rid = inst.get("evaluation_result_id")
        if rid is not None and rid not in result_ids:
            raise IngestError(f"{samples}: line {n}: field evaluation_result_id: unknown evaluation {rid!r} "
                              f"(the aggregate has {', '.join(sorted(result_ids)) or 'none'})")
        if rid is None and inst["evaluation_name"] not in names:
            raise IngestError(f"{samples}: line {n}: field evaluation_name: unknown evaluation "
                              f"{inst['evaluation_name']!r} (the aggregate has {', '.join(sorted(names))})")
        key = _instance_key(inst)
        if key in seen:
            raise IngestError(f"{samples}: line {n}: field sample_id: {key[1]!r} of {key[0]!r} (epoch "
                              f"{key[2] or '-'}, attempt {key[3] or '-'}) repeats line {seen[key]}")
        seen[key] = n


def read_file(path: Path) -> EeeFile:
    """One aggregate record and its instances, checked (module docstring)."""
    record, text = read_json(path)
    check_schema(record, "eval", path, text)
    h = hashlib.sha256(text.encode("utf-8"))
    out = EeeFile(path, record)
    samples = _companion(path, record)
    if samples is not None:
        if not samples.is_file():
            raise IngestError(f"{path}: line {line_of(text, ['file_path'], None)}: field "
                              f"detailed_evaluation_results.file_path: {samples.name} is not beside the record")
        data = samples.read_bytes()
        rows = read_jsonl(samples)
        _check_checksum(path, record, text, samples, data, len(rows))
        _check_instances(record, samples, rows)
        out.instances, out.samples_path = rows, samples
        h.update(b"\0" + data)
    out.content_sha256 = h.hexdigest()
    return out

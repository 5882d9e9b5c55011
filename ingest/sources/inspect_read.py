"""Read Inspect AI eval logs (``.eval`` and ``.json``) into plain JSON values (docs/inspect.md).

One container reading serves both readers: a ``.eval`` log's ZIP directory is checked (no unsafe
names; of two members of one name the last counts, as in Inspect), each member it reads is decompressed within the limits of
:mod:`inspect_bounds` (stored, deflate, or zstd = ZIP method 93, which Python's ``zipfile`` cannot
decompress) and checked against its recorded size and CRC; a ``.json`` log is read whole within
the size limit; every document's nesting depth is checked before it is parsed; the header and every
sample pass the one validation of :mod:`inspect_check`. Then:

- the built-in reader hands out those samples with condensed events expanded (a model event's
  ``input_refs`` point into the sample's ``events_data.messages``) and ``attachment://`` references
  replaced by their text;
- :class:`InspectApiLog` hands out the same samples as Inspect's own Python API
  (``inspect_ai.log``, the ``[inspect]`` extra) reads them.

Both hand out the same log header (``version``, ``status``, ``eval``, ``plan``, ``results``, ...)
and the samples in one order (the dataset's ids, then epochs). A log still being written has no
``header.json``: its eval spec comes from ``_journal/start.json``. Damage is an
:class:`IngestError` naming the file (and member) and the reason, the same from both readers.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import re
import struct
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from agenthop.harness.json_exact import parse_json_exact
from agenthop.ingest.conform import IngestError

from . import inspect_map
from .inspect_bounds import ZIP_ZSTD, BoundError, Limits, check_depth, check_document_size, inflate, limits_from_env
from .inspect_check import (
    Listing,
    SampleId,
    check_header,
    check_keys,
    check_sample,
    check_text,
    id_text,
    may_hold_surrogates,
    order,
    sample_key,
)

#: Log format versions the built-in reader knows (Inspect's LOG_SCHEMA_VERSION).
KNOWN_VERSIONS = frozenset({1, 2})

HEADER = "header.json"
START = "_journal/start.json"
SAMPLES_DIR = "samples/"
SAMPLES_RE = re.compile(r"^samples/(.+)_epoch_([1-9]\d{0,8})\.json$")
ATTACHMENT = "attachment://"
_LOCAL_HEADER = struct.Struct("<4s5H3L2H")  # signature ... name length, extra length


# --------------------------------------------------------------------------------------------
# finding logs


def is_log_file(path: Path) -> bool:
    if path.suffix == ".eval":
        return True
    if path.suffix != ".json" or path.name.startswith("."):
        return False
    try:  # a .json log starts with its version: {"version": 2, "status": ...
        with path.open("rb") as fh:
            head = fh.read(200)
    except OSError:
        return False
    return re.match(rb'\s*\{\s*"version"\s*:', head) is not None


def discover(path: Path) -> list[Path]:
    """``path`` if it is a log file, else every log file below the directory (sorted)."""
    if not path.exists():
        raise IngestError(f"--inspect-log {path}: no such file or directory")
    if path.is_file():
        if path.suffix not in (".eval", ".json"):
            raise IngestError(f"--inspect-log {path}: not an Inspect log (expected a .eval or .json file)")
        return [path]
    found = sorted(p for p in path.rglob("*") if p.is_file() and is_log_file(p))
    if not found:
        raise IngestError(f"--inspect-log {path}: no Inspect logs (.eval or .json) in this directory")
    return found


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


# --------------------------------------------------------------------------------------------
# condensed events and attachments


def resolve_attachments(value: Any, attachments: dict[str, str]) -> Any:
    """``value`` with every ``attachment://<hash>`` string replaced by its text (lists and objects
    are changed in place)."""
    if isinstance(value, str):
        if value.startswith(ATTACHMENT):
            return attachments.get(value[len(ATTACHMENT) :], value)
        return value
    stack = [value]
    while stack:
        node = stack.pop()
        pairs = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, v in pairs:
            if type(v) is str:
                if v.startswith(ATTACHMENT):
                    node[key] = attachments.get(v[len(ATTACHMENT) :], v)
            elif isinstance(v, (dict, list)):
                stack.append(v)
    return value


def expand_events(events: list[Any], data: dict[str, Any] | None) -> list[Any]:
    """Model events with their ``input`` (and call request messages) restored from ``events_data``."""
    if not data:
        return events
    pool = data.get("messages") or []
    calls = data.get("calls") or []
    out = []
    for ev in events:
        if isinstance(ev, dict) and ev.get("event") == "model":
            ev = dict(ev)
            refs = ev.pop("input_refs", None)
            if refs:
                ev["input"] = [m for start, end in refs for m in pool[start:end]]
            call = ev.get("call")
            if isinstance(call, dict) and call.get("call_refs"):
                call = dict(call)
                key = call.pop("call_key", None) or "messages"
                request = dict(call.get("request") or {})
                request[key] = [c for start, end in call.pop("call_refs") for c in calls[start:end]]
                call["request"] = request
                ev["call"] = call
        out.append(ev)
    return out


def normalise_sample(sample: dict[str, Any]) -> dict[str, Any]:
    """A sample as read from the file -> events expanded, attachments resolved, pools dropped."""
    attachments = sample.pop("attachments", None) or {}
    data = sample.pop("events_data", None)
    sample["events"] = expand_events(sample.get("events") or [], data)
    return resolve_attachments(sample, attachments) if attachments else sample


def mapping_sample(sample: dict[str, Any]) -> dict[str, Any]:
    """A sample as read from the file (or as Inspect's API hands it out) -> what the mapping reads of
    it (:func:`inspect_map.mapping_view`: the events cut to the fields it reads, so a model event's
    condensed ``input`` is neither expanded nor resolved), attachments resolved, pools dropped. The
    mapping gives the same rows as from :func:`normalise_sample`, at a fraction of the cost: the
    expanded inputs repeat every earlier message of the sample for each model call."""
    attachments = sample.pop("attachments", None) or {}
    sample.pop("events_data", None)
    view = inspect_map.mapping_view(sample)
    return resolve_attachments(view, attachments) if attachments else view


# --------------------------------------------------------------------------------------------
# the container: one bounded reading for both readers


@dataclass
class LogInfo:
    """What every reader reports about one log file."""

    path: Path
    header: dict[str, Any]
    #: False for a log still being written (no header.json): its results are not final
    complete: bool
    #: (sample id as text, epoch) in reading order
    sample_keys: list[tuple[str, int]] = field(default_factory=list)


def parse_json(raw: bytes | str) -> Any:
    """A JSON document's value, as Python's ``json`` reads it (NaN and Infinity accepted: Inspect can
    write them; integers of any length kept whole); see :func:`parse_json_exact`."""
    return parse_json_exact(raw)[0]


def _document(raw: bytes, limits: Limits) -> tuple[Any, bool, bool]:
    """A JSON document, its depth checked before parsing; whether it may hold a lone surrogate, and
    whether orjson read it (:func:`parse_json_exact`)."""
    check_depth(raw, limits)
    try:
        value, exact = parse_json_exact(raw)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise BoundError(f"not valid JSON ({_line(exc)})") from None
    return value, may_hold_surrogates(raw), exact


def _unsafe_name(name: str) -> str | None:
    """Why a member name is refused: one that could point outside the log when unpacked."""
    if name.startswith("/") or "\\" in name or "\0" in name:
        return "an absolute path, a backslash or a NUL"
    if any(part in ("", ".", "..") for part in name.rstrip("/").split("/")):
        return "an empty, '.' or '..' part"
    return None


class _Container:
    """What both readers share: the header and the samples' keys checked (inspect_check), the
    samples handed out raw and checked, in reading order."""

    #: whether orjson read the sample handed out last (orjson then writes it back exactly)
    exact: bool = False
    path: Path
    header: dict[str, Any]
    complete: bool
    listing: Listing
    keys: list[tuple[SampleId, int]]

    def _check(self, describe: Any = None) -> None:
        try:
            self.listing = check_header(self.header)
            success = self.complete and self.header.get("status") == "success"
            check_keys(self.keys, self.listing, success, describe)
        except ValueError as exc:
            raise IngestError(f"{self.path}: {exc}") from None
        self.keys = [self.keys[i] for i in order(self.keys, self.listing)]

    def info(self) -> LogInfo:
        return LogInfo(self.path, self.header, self.complete, [(id_text(s), e) for s, e in self.keys])

    def raw_samples(self) -> Iterator[dict[str, Any]]:
        raise NotImplementedError

    def sample_bytes(self) -> int:
        """The size of the samples' JSON (a ``.eval`` log's sample members decompressed; a ``.json`` log whole)."""
        raise NotImplementedError

    def streams(self) -> bool:
        """Whether the samples are read one at a time (a ``.eval`` log), not held whole (a ``.json`` log)."""
        return isinstance(self, ZipLog)

    def samples(self, for_mapping: bool = False) -> Iterator[dict[str, Any]]:
        """The samples in reading order, normalised (:func:`normalise_sample`), or with
        ``for_mapping`` cut to what the mapping reads (:func:`mapping_sample`)."""
        normalise = mapping_sample if for_mapping else normalise_sample
        for sample in self.raw_samples():
            try:
                yield normalise(sample)
            except (TypeError, ValueError, KeyError, AttributeError, IndexError) as exc:
                raise IngestError(f"{self.path}: sample {id_text(sample['id'])!r} epoch {sample['epoch']}: its "
                                  f"condensed events cannot be expanded ({type(exc).__name__}: {_line(exc)})") from None

    def close(self) -> None:
        pass


class ZipLog(_Container):
    """A ``.eval`` log: a ZIP of JSON members, each decompressed within the limits and checked
    against its recorded size and CRC."""

    def __init__(self, path: Path, limits: Limits | None = None) -> None:
        self.path = path
        self.limits = limits or limits_from_env()
        try:
            with zipfile.ZipFile(path) as z:
                infos = z.infolist()
        except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
            raise IngestError(f"{path}: not a readable .eval log (damaged or truncated ZIP: {_line(exc)})") from None
        self._members: dict[str, zipfile.ZipInfo] = {}
        for info in infos:
            name = info.filename
            why = _unsafe_name(name)
            if why:
                raise IngestError(f"{path}: member {name!r} has an unsafe name ({why})")
            # Inspect appends a second member under the same name when it re-runs a sample (a requeued
            # sample superseding its earlier record) and reads the last one: so do both readers here.
            if info.flag_bits & 1:
                raise IngestError(f"{path}: member {name} is encrypted")
            self._members[name] = info
        self._fh = path.open("rb")
        try:
            self._open()
        except BaseException:
            self._fh.close()
            raise

    def _open(self) -> None:
        if HEADER in self._members:
            header, self.complete = self._json(HEADER, "the log header"), True
        elif START in self._members:
            header, self.complete = self._json(START, "the log header"), False
        else:
            raise IngestError(f"{self.path}: neither {HEADER} nor {START} is in the log; not an Inspect log")
        if not isinstance(header, dict) or not isinstance(header.get("eval"), dict):
            raise IngestError(f"{self.path}: the log header has no 'eval' object")
        self.header = header
        try:
            listing = check_header(header)
        except ValueError as exc:
            raise IngestError(f"{self.path}: {exc}") from None
        by_text = {id_text(i): i for i in listing.ids} if listing.ids is not None else {}
        self.keys, self._names = [], {}
        for name in self._members:
            if not name.startswith(SAMPLES_DIR):
                continue
            m = SAMPLES_RE.match(name)
            if not m or name != sample_member(m.group(1), int(m.group(2))):
                raise IngestError(f"{self.path}: member {name} is not a sample member "
                                  f"({SAMPLES_DIR}<id>_epoch_<n>.json)")
            key = (by_text.get(m.group(1), m.group(1)), int(m.group(2)))
            self.keys.append(key)
            self._names[(m.group(1), key[1])] = name
        self._check(lambda sid, epoch: f"member {sample_member(sid, epoch)}")

    def close(self) -> None:
        self._fh.close()

    def sample_bytes(self) -> int:
        return sum(self._members[name].file_size for name in self._names.values())

    def _raw(self, name: str) -> bytes:
        info = self._members.get(name)
        if info is None:
            raise IngestError(f"{self.path}: member {name} is missing from the log")
        try:
            self._fh.seek(info.header_offset)
            fixed = self._fh.read(_LOCAL_HEADER.size)
            if len(fixed) < _LOCAL_HEADER.size or fixed[:4] != b"PK\x03\x04":
                raise BoundError("bad local file header")
            fields = _LOCAL_HEADER.unpack(fixed)
            start = info.header_offset + _LOCAL_HEADER.size + fields[-2] + fields[-1]
            return inflate(self._fh, start, info.compress_type, info.compress_size, info.file_size, info.CRC,
                           self.limits)
        except (BoundError, OSError, EOFError, MemoryError) as exc:
            raise IngestError(f"{self.path} (member {name}): cannot be decompressed ({_line(exc)})") from None

    def _json(self, name: str, what: str) -> Any:
        try:
            value, surrogates, _ = _document(self._raw(name), self.limits)
            if surrogates:
                check_text(value, what)
        except (BoundError, ValueError) as exc:
            raise IngestError(f"{self.path} (member {name}): {exc}") from None
        return value

    def member(self, name: str) -> Any:
        """One member's JSON value, read within the limits (no sample checks)."""
        return self._json(name, f"member {name}")

    def raw_samples(self) -> Iterator[dict[str, Any]]:
        for sid, epoch in self.keys:
            name = self._names[(id_text(sid), epoch)]
            try:
                value, surrogates, self.exact = _document(self._raw(name), self.limits)
                key = sample_key(value)
                if (id_text(key[0]), key[1]) != (id_text(sid), epoch):
                    raise ValueError(f"the member holds sample {key[0]!r} epoch {key[1]}, not {sid!r} epoch {epoch}")
                check_sample(value, surrogates)
            except (BoundError, ValueError) as exc:
                raise IngestError(f"{self.path} (member {name}): {exc}") from None
            yield value


class JsonLog(_Container):
    """An older ``.json`` log: one document holding the header keys and ``samples``, read whole
    within the size limit."""

    def __init__(self, path: Path, limits: Limits | None = None) -> None:
        self.path = path
        limits = limits or limits_from_env()
        try:
            check_document_size(path.stat().st_size, limits)
            doc, self._surrogates, self.exact = _document(path.read_bytes(), limits)
        except OSError as exc:
            raise IngestError(f"{path}: cannot read the log ({_line(exc)})") from None
        except BoundError as exc:
            raise IngestError(f"{path}: {exc}") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("eval"), dict):
            raise IngestError(f"{path}: not an Inspect log (no 'eval' object)")
        samples = doc.pop("samples", None) or []
        if not isinstance(samples, list):
            raise IngestError(f"{path}: 'samples' must be a list")
        doc.pop("reductions", None)
        self.header = doc
        self.complete = doc.get("status") != "started"
        try:
            if self._surrogates:
                check_text(doc, "the log header")
            self.keys = [sample_key(s, f"samples[{i}]") for i, s in enumerate(samples)]
        except ValueError as exc:
            raise IngestError(f"{path}: {exc}") from None
        self._by_key = {(id_text(k[0]), k[1]): s for k, s in zip(self.keys, samples)}
        self._size = path.stat().st_size
        self._check()

    def sample_bytes(self) -> int:
        return self._size

    def close(self) -> None:
        self._by_key = {}

    def raw_samples(self) -> Iterator[dict[str, Any]]:
        for sid, epoch in self.keys:
            sample = self._by_key[(id_text(sid), epoch)]
            try:
                check_sample(sample, self._surrogates)
            except ValueError as exc:
                raise IngestError(f"{self.path}: {exc}") from None
            yield sample


_END = struct.Struct("<4s4H2LH")  # end of central directory: ..., entries, directory size, offset, comment
_END64_LOCATOR = struct.Struct("<4sLQL")
_END64 = struct.Struct("<4sQ2H2L4Q")  # ..., entries on disk, entries, directory size, directory offset
_ENTRY = struct.Struct("<4s6H3L5H2L")  # a central directory entry, before its name, extra and comment


def finished_header(path: Path, limits: Limits | None = None) -> dict[str, Any] | None:
    """The header of a finished ``.eval`` log read straight from the last entry of its ZIP directory
    (Inspect writes ``header.json`` last), without reading the rest of the directory: what telling
    an unchanged log costs. None when the log is not laid out so (the full reading then decides);
    nothing here is checked beyond that, so only a log whose bytes were loaded before may rely on it."""
    try:
        with path.open("rb") as fh:
            size = fh.seek(0, 2)
            tail_size = min(size, _END.size + 0xFFFF)
            fh.seek(size - tail_size)
            tail = fh.read(tail_size)
            at = tail.rfind(b"PK\x05\x06")
            if at < 0:
                return None
            _, _, _, _, entries, dir_size, dir_offset, _ = _END.unpack_from(tail, at)
            if 0xFFFFFFFF in (dir_size, dir_offset) or entries == 0xFFFF:
                loc = tail.rfind(b"PK\x06\x07", 0, at)
                if loc < 0:
                    return None
                fh.seek(_END64_LOCATOR.unpack_from(tail, loc)[2])
                record = fh.read(_END64.size)
                if len(record) < _END64.size or record[:4] != b"PK\x06\x06":
                    return None
                dir_size, dir_offset = _END64.unpack(record)[8:10]
            last = min(dir_size, 1 << 16)
            fh.seek(dir_offset + dir_size - last)
            part = fh.read(last)
            name = HEADER.encode()
            at = len(part) - _ENTRY.size - len(name)
            while at >= 0:  # the last entry: the one that ends where the directory ends
                at = part.rfind(b"PK\x01\x02", 0, at + 4)
                if at < 0:
                    return None
                f = _ENTRY.unpack_from(part, at)
                if at + _ENTRY.size + f[10] + f[11] + f[12] == len(part):
                    break
                at -= 1
            if at < 0 or part[at + _ENTRY.size: at + _ENTRY.size + f[10]] != name or f[2] & 1:
                return None
            method, crc, compressed, inflated, offset = f[4], f[7], f[8], f[9], f[16]
            if 0xFFFFFFFF in (compressed, inflated, offset):
                return None
            fh.seek(offset)
            fixed = fh.read(_LOCAL_HEADER.size)
            if len(fixed) < _LOCAL_HEADER.size or fixed[:4] != b"PK\x03\x04":
                return None
            local = _LOCAL_HEADER.unpack(fixed)
            raw = inflate(fh, offset + _LOCAL_HEADER.size + local[-2] + local[-1], method, compressed, inflated, crc,
                          limits or limits_from_env())
        header, _, _ = _document(raw, limits or limits_from_env())
    except (OSError, EOFError, BoundError, ValueError, struct.error, MemoryError):
        return None
    return header if isinstance(header, dict) and isinstance(header.get("eval"), dict) else None


def sample_member(sid: str, epoch: int) -> str:
    """The member Inspect writes a sample to."""
    return f"{SAMPLES_DIR}{sid}_epoch_{epoch}.json"


def container(path: Path, limits: Limits | None = None) -> ZipLog | JsonLog:
    return ZipLog(path, limits) if path.suffix == ".eval" else JsonLog(path, limits)


class InspectApiLog:
    """Any log Inspect can read, through ``inspect_ai.log`` (needs the ``[inspect]`` extra).

    The log is first read by the same bounded container reading and checks as the built-in
    reader's (sizes, checksums, depth, the header and every sample, a batch ahead of Inspect);
    Inspect's API then reads the samples those checks passed, in the same order.
    """

    BATCH = 32
    #: whether orjson read the sample handed out last
    exact: bool = False

    def __init__(self, path: Path, limits: Limits | None = None) -> None:
        self.path = path
        self._own = container(path, limits)

    def close(self) -> None:
        self._own.close()

    def info(self) -> LogInfo:
        return self._own.info()

    def sample_bytes(self) -> int:
        return self._own.sample_bytes()

    def streams(self) -> bool:
        return self._own.streams()

    def samples(self, for_mapping: bool = False) -> Iterator[dict[str, Any]]:
        """The samples as Inspect's API reads them (attachments resolved), in reading order; with
        ``for_mapping`` cut to what the mapping reads (:func:`mapping_sample`)."""
        out = self._samples()
        return (mapping_sample(s) for s in out) if for_mapping else out

    def _samples(self) -> Iterator[dict[str, Any]]:
        if isinstance(self._own, JsonLog):  # one document: every sample checked, then Inspect reads it
            yield from self._json_samples([(raw["id"], raw["epoch"]) for raw in self._own.raw_samples()])
            return
        batch: list[tuple[SampleId, int]] = []
        for raw in self._own.raw_samples():  # checked (a batch ahead of Inspect)
            batch.append((raw["id"], raw["epoch"]))
            if len(batch) == self.BATCH:
                yield from self._eval_samples(batch)
                batch = []
        if batch:
            yield from self._eval_samples(batch)

    def _fail(self, exc: BaseException, key: tuple[SampleId, int] | None) -> IngestError:
        what = f"sample {id_text(key[0])!r} epoch {key[1]}" if key else "the log"
        return IngestError(f"{self.path}: Inspect cannot read {what} ({type(exc).__name__}: {_line(exc)}); "
                           f"the built-in reader reads it (try --inspect-reader builtin)")

    def _eval_samples(self, keys: list[tuple[SampleId, int]]) -> Iterator[dict[str, Any]]:
        from inspect_ai.log import read_eval_log_samples_by_id

        try:
            samples = read_eval_log_samples_by_id(str(self.path), keys, concurrency=1, resolve_attachments=True)
        except Exception as exc:  # Inspect raises many types; the user needs the reason, not a traceback
            raise self._fail(exc, keys[0] if len(keys) == 1 else None) from None
        for key, sample in zip(keys, samples):
            yield self._dump(sample, key)

    def _json_samples(self, keys: list[tuple[SampleId, int]]) -> Iterator[dict[str, Any]]:
        from inspect_ai.log import read_eval_log

        try:
            log = read_eval_log(str(self.path), resolve_attachments=True)
        except Exception as exc:
            raise self._fail(exc, None) from None
        by_key = {(id_text(s.id), s.epoch): s for s in log.samples or []}
        for key in keys:
            sample = by_key.get((id_text(key[0]), key[1]))
            if sample is None:
                raise IngestError(f"{self.path}: Inspect does not find sample {id_text(key[0])!r} epoch {key[1]}")
            yield self._dump(sample, key)

    def _dump(self, sample: Any, key: tuple[SampleId, int]) -> dict[str, Any]:
        try:
            value, self.exact = _api_json(sample, exclude={"attachments", "events_data"})
            return value
        except Exception as exc:
            raise self._fail(exc, key) from None


def _line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]


def _api_json(obj: Any, exclude: set[str]) -> tuple[dict[str, Any], bool]:
    """A pydantic object of Inspect's -> the JSON values its log file holds (and whether orjson read them)."""
    text = obj.model_dump_json(exclude=exclude, exclude_none=True)
    return parse_json_exact(text)


Log = ZipLog | JsonLog | InspectApiLog

#: --inspect-reader choices
READERS = ("auto", "builtin", "inspect")


def inspect_installed() -> bool:
    try:
        import inspect_ai.log  # noqa: F401
    except ImportError:
        return False
    return True


def open_log(path: Path, reader: str = "auto", limits: Limits | None = None) -> Log:
    """Open one log with the chosen reader (see docs/inspect.md#readers).

    ``auto`` reads through Inspect's own API when inspect-ai is installed (the surface Inspect's
    maintainers keep stable) and through the built-in reader otherwise; the built-in reader refuses
    a log format version it does not know.
    """
    if reader == "inspect" or (reader == "auto" and inspect_installed()):
        if not inspect_installed():
            raise IngestError(
                f"{path}: --inspect-reader inspect needs inspect-ai (pip install 'agenthop-warehouse[inspect]')"
            )
        return InspectApiLog(path, limits)
    log: Log = container(path, limits)
    version = log.info().header.get("version")
    if version in KNOWN_VERSIONS:
        return log
    log.close()
    raise IngestError(
        f"{path}: log format version {version!r} is newer than this reader knows "
        f"({', '.join(map(str, sorted(KNOWN_VERSIONS)))}); install inspect-ai to read it through Inspect's API "
        f"(pip install 'agenthop-warehouse[inspect]')"
    )


# --------------------------------------------------------------------------------------------
# reading in a second process

#: a ``.eval`` log of more samples than this is read in a second process, when that is asked for
#: (:data:`SECOND_READER_ENV`; :func:`mapping_samples`)
PARALLEL_SAMPLES = 1000
#: set to 1, a large ``.eval`` log is read in a second process (off by default: on an idle 2-core
#: machine it took longer than reading in the ingest's own process; docs/inspect.md#speed)
SECOND_READER_ENV = "AGENTHOP_INSPECT_SECOND_READER"


def mapping_samples(log: Log, reader: str) -> Iterator[dict[str, Any]]:
    """The log's samples cut to what the mapping reads (``samples(for_mapping=True)``). With
    :data:`SECOND_READER_ENV` set to 1, a ``.eval`` log of more than :data:`PARALLEL_SAMPLES` samples is
    read (decompressed, checked, parsed, its attachments resolved) by a second process while this one
    maps and writes the samples before: the same samples, in the same order, with the same errors
    (docs/inspect.md#speed)."""
    info = log.info()
    if (os.environ.get(SECOND_READER_ENV) != "1" or not log.streams()
            or len(info.sample_keys) <= PARALLEL_SAMPLES):
        return log.samples(for_mapping=True)
    return _read_elsewhere(info.path, reader)


def _read_elsewhere(path: Path, reader: str) -> Iterator[dict[str, Any]]:
    import subprocess
    import sys

    from . import inspect_reader_process as worker

    # a process of its own (not multiprocessing's, which would start by importing the caller's script)
    proc = subprocess.Popen([sys.executable, "-m", worker.__name__, str(path), reader],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    try:
        for kind, payload in worker.frames(proc.stdout):
            if kind == worker.ERROR:
                raise IngestError(payload.decode("utf-8", "replace"))
            if kind == worker.END:
                return
            # orjson's text where orjson writes the sample back exactly, else a pickle
            yield orjson.loads(payload) if kind == worker.JSON else pickle.loads(payload)
        proc.wait()
        raise IngestError(f"{path}: the process reading the log ended early (exit code {proc.returncode})")
    finally:
        proc.stdout.close()
        if proc.poll() is None:
            proc.kill()
        proc.wait()

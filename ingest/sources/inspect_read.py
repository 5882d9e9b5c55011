"""Read Inspect AI eval logs (``.eval`` and ``.json``) into plain JSON values (docs/inspect.md).

Two readers give the same values:

- the built-in one reads the ``.eval`` ZIP members itself (stored, deflate, or zstd = ZIP method 93,
  which Python's ``zipfile`` cannot decompress) and the older one-document ``.json`` logs;
- :class:`InspectApiLog` goes through Inspect's own Python API (``inspect_ai.log``) when the
  ``[inspect]`` extra is installed.

Both hand out the log header (``version``, ``status``, ``eval``, ``plan``, ``results``, ...) and the
samples as dicts with condensed events expanded (a model event's ``input_refs`` point into the
sample's ``events_data.messages``) and ``attachment://`` references replaced by their text. A log
still being written has no ``header.json``: its eval spec comes from ``_journal/start.json``.
Damage (a truncated ZIP, a member missing, a member that is not JSON) is an :class:`IngestError`
naming the file and the reason.
"""

from __future__ import annotations

import hashlib
import json
import re
import struct
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agenthop.ingest.conform import IngestError

#: Log format versions the built-in reader knows (Inspect's LOG_SCHEMA_VERSION).
KNOWN_VERSIONS = frozenset({1, 2})

HEADER = "header.json"
START = "_journal/start.json"
SAMPLES_RE = re.compile(r"^samples/(.+)_epoch_(\d+)\.json$")
ATTACHMENT = "attachment://"
ZIP_ZSTD = 93
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
    """``value`` with every ``attachment://<hash>`` string replaced by its text."""
    if isinstance(value, str):
        if value.startswith(ATTACHMENT):
            return attachments.get(value[len(ATTACHMENT) :], value)
        return value
    if isinstance(value, list):
        return [resolve_attachments(v, attachments) for v in value]
    if isinstance(value, dict):
        return {k: resolve_attachments(v, attachments) for k, v in value.items()}
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


# --------------------------------------------------------------------------------------------
# the built-in reader


def _loads(raw: bytes, where: str) -> Any:
    try:
        return json.loads(raw)  # accepts NaN and Infinity, which Inspect can write
    except (ValueError, UnicodeDecodeError) as exc:
        raise IngestError(f"{where}: not valid JSON ({exc})") from None


@dataclass
class LogInfo:
    """What every reader reports about one log file."""

    path: Path
    header: dict[str, Any]
    #: False for a log still being written (no header.json): its results are not final
    complete: bool
    #: (sample id, epoch) in file order
    sample_keys: list[tuple[str, int]] = field(default_factory=list)


def expected_samples(header: dict[str, Any]) -> list[tuple[str, int]]:
    """(sample id, epoch) of every sample a finished eval ran, from its dataset and epochs."""
    ev = header["eval"]
    dataset = ev.get("dataset") if isinstance(ev.get("dataset"), dict) else {}
    ids = dataset.get("sample_ids")
    config = ev.get("config") if isinstance(ev.get("config"), dict) else {}
    epochs = config.get("epochs")
    if not isinstance(ids, list) or not isinstance(epochs, int) or isinstance(epochs, bool):
        return []
    return [(str(i), e) for e in range(1, epochs + 1) for i in ids]


def check_complete(path: Path, header: dict[str, Any], complete: bool, keys: list[tuple[str, int]], what: str) -> None:
    """A finished, successful eval holds every sample it lists; name the first one missing."""
    if not complete or header.get("status") != "success":
        return
    missing = sorted(set(expected_samples(header)) - set(keys))
    if missing:
        sid, epoch = missing[0]
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        raise IngestError(f"{path}: {what.format(id=sid, epoch=epoch)} is missing from the log{more}; "
                          f"the finished eval lists it")


class ZipLog:
    """A ``.eval`` log: a ZIP of JSON members, read without inspect-ai."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._zip = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError, EOFError) as exc:
            raise IngestError(f"{path}: not a readable .eval log (damaged or truncated ZIP: {exc})") from None
        self._members = {i.filename: i for i in self._zip.infolist()}
        self._fh = path.open("rb")

    def close(self) -> None:
        self._zip.close()
        self._fh.close()

    def member(self, name: str) -> Any:
        info = self._members.get(name)
        if info is None:
            raise IngestError(f"{self.path}: member {name} is missing from the log")
        where = f"{self.path} (member {name})"
        try:
            if info.compress_type == ZIP_ZSTD:
                raw = self._read_zstd(info)
            else:
                raw = self._zip.read(info)
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, ValueError) as exc:
            raise IngestError(f"{where}: cannot be decompressed ({exc})") from None
        return _loads(raw, where)

    def _read_zstd(self, info: zipfile.ZipInfo) -> bytes:
        import zstandard

        self._fh.seek(info.header_offset)
        fixed = self._fh.read(_LOCAL_HEADER.size)
        if len(fixed) < _LOCAL_HEADER.size or fixed[:4] != b"PK\x03\x04":
            raise ValueError("bad local file header")
        fields = _LOCAL_HEADER.unpack(fixed)
        name_len, extra_len = fields[-2], fields[-1]
        self._fh.seek(info.header_offset + _LOCAL_HEADER.size + name_len + extra_len)
        data = self._fh.read(info.compress_size)
        if len(data) < info.compress_size:
            raise ValueError("member is truncated")
        try:
            raw = zstandard.ZstdDecompressor().decompressobj().decompress(data)
        except zstandard.ZstdError as exc:
            raise ValueError(f"zstd: {exc}") from None
        if len(raw) != info.file_size or zlib.crc32(raw) != info.CRC:
            raise ValueError("member does not match its recorded size and checksum")
        return raw

    def info(self) -> LogInfo:
        keys = []
        for name in self._members:
            m = SAMPLES_RE.match(name)
            if m:
                keys.append((m.group(1), int(m.group(2))))
        if HEADER in self._members:
            header = self.member(HEADER)
            complete = True
        elif START in self._members:
            header = self.member(START)
            complete = False
        else:
            raise IngestError(f"{self.path}: neither {HEADER} nor {START} is in the log; not an Inspect log")
        if not isinstance(header, dict) or not isinstance(header.get("eval"), dict):
            raise IngestError(f"{self.path}: the log header has no 'eval' object")
        check_complete(self.path, header, complete, keys, "member samples/{id}_epoch_{epoch}.json")
        return LogInfo(self.path, header, complete, keys)

    def samples(self) -> Iterator[dict[str, Any]]:
        for name in self._members:
            if SAMPLES_RE.match(name):
                sample = self.member(name)
                if not isinstance(sample, dict):
                    raise IngestError(f"{self.path} (member {name}): a sample must be a JSON object")
                yield normalise_sample(sample)


class JsonLog:
    """An older ``.json`` log: one document holding the header keys and ``samples``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise IngestError(f"{path}: cannot read the log ({exc})") from None
        doc = _loads(raw, str(path))
        if not isinstance(doc, dict) or not isinstance(doc.get("eval"), dict):
            raise IngestError(f"{path}: not an Inspect log (no 'eval' object)")
        self._samples = doc.pop("samples", None) or []
        if not isinstance(self._samples, list):
            raise IngestError(f"{path}: 'samples' must be a list")
        doc.pop("reductions", None)
        self._header = doc

    def close(self) -> None:
        self._samples = []

    def info(self) -> LogInfo:
        keys = [(str(s.get("id")), int(s.get("epoch") or 1)) for s in self._samples if isinstance(s, dict)]
        complete = self._header.get("status") != "started"
        check_complete(self.path, self._header, complete, keys, "sample {id} (epoch {epoch})")
        return LogInfo(self.path, self._header, complete, keys)

    def samples(self) -> Iterator[dict[str, Any]]:
        for i, sample in enumerate(self._samples):
            if not isinstance(sample, dict):
                raise IngestError(f"{self.path}: samples[{i}] must be a JSON object")
            yield normalise_sample(sample)


class InspectApiLog:
    """Any log Inspect can read, through ``inspect_ai.log`` (needs the ``[inspect]`` extra)."""

    def __init__(self, path: Path) -> None:
        from inspect_ai.log import read_eval_log

        self.path = path
        try:
            log = read_eval_log(str(path), header_only=True)
        except Exception as exc:  # Inspect raises many types; the user needs the reason, not a traceback
            raise IngestError(
                f"{path}: Inspect cannot read the log ({type(exc).__name__}: {_line(exc)}){_diagnosis(path)}"
            ) from None
        self._header = _api_json(log, exclude={"samples", "reductions", "location", "etag"})
        self._complete = log.status != "started"

    def close(self) -> None:
        pass

    def info(self) -> LogInfo:
        return LogInfo(self.path, self._header, self._complete)

    def samples(self) -> Iterator[dict[str, Any]]:
        """Every sample Inspect reads; then, as the built-in reader does before reading, a finished
        eval that lacks a sample it lists is refused (Inspect itself skips a missing member)."""
        from inspect_ai.log import read_eval_log_samples

        it = read_eval_log_samples(str(self.path), all_samples_required=False, resolve_attachments=True)
        keys: list[tuple[str, int]] = []
        while True:
            try:
                sample = next(it)
            except StopIteration:
                break
            except Exception as exc:
                raise IngestError(
                    f"{self.path}: Inspect cannot read a sample ({type(exc).__name__}: {_line(exc)})"
                    f"{_diagnosis(self.path)}"
                ) from None
            keys.append((str(sample.id), int(sample.epoch)))
            yield _api_json(sample, exclude={"attachments", "events_data"})
        check_complete(self.path, self._header, self._complete, keys, "sample {id} (epoch {epoch})")


def _diagnosis(path: Path) -> str:
    """What the built-in reader finds wrong with a log Inspect cannot read, or that it reads it."""
    try:
        log: Log = ZipLog(path) if path.suffix == ".eval" else JsonLog(path)
        try:
            log.info()
            for _ in log.samples():
                pass
        finally:
            log.close()
    except IngestError as exc:
        reason = str(exc)
        prefix = f"{path}: "
        return "; " + (reason[len(prefix):] if reason.startswith(prefix) else reason)
    return "; the built-in reader opens it (try --inspect-reader builtin)"


def _line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]


def _api_json(obj: Any, exclude: set[str]) -> dict[str, Any]:
    """A pydantic object of Inspect's -> the JSON values its log file holds."""
    text = obj.model_dump_json(exclude=exclude, exclude_none=True)
    return json.loads(text)


Log = ZipLog | JsonLog | InspectApiLog

#: --inspect-reader choices
READERS = ("auto", "builtin", "inspect")


def inspect_installed() -> bool:
    try:
        import inspect_ai.log  # noqa: F401
    except ImportError:
        return False
    return True


def open_log(path: Path, reader: str = "auto") -> Log:
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
        return InspectApiLog(path)
    log: Log = ZipLog(path) if path.suffix == ".eval" else JsonLog(path)
    version = log.info().header.get("version")
    if version in KNOWN_VERSIONS:
        return log
    log.close()
    raise IngestError(
        f"{path}: log format version {version!r} is newer than this reader knows "
        f"({', '.join(map(str, sorted(KNOWN_VERSIONS)))}); install inspect-ai to read it through Inspect's API "
        f"(pip install 'agenthop-warehouse[inspect]')"
    )

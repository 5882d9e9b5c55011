"""The one validation of an Inspect log's values, shared by both readers (docs/inspect.md#damaged-logs).

Both readers take the header and every sample from the same bounded container reading
(:mod:`inspect_read`) and pass them through these checks before anything is mapped, so a log is
refused by both with the same message or loaded by both. Messages name the sample and the field;
the caller adds the file (and member).

Rules (one per case, whichever reader runs):

- the eval spec has a non-empty string ``eval_id``; ``dataset.sample_ids``, when listed, are
  integers or strings, distinct as text; ``config.epochs`` is a whole number from 1 to MAX_EPOCHS
  (absent: 1);
- every sample records its ``id`` (an integer or a string) and its ``epoch`` (a whole number); a
  sample the eval does not list (an id outside ``sample_ids`` or an epoch past ``config.epochs``)
  and a second sample of one id and epoch are refused; a finished, successful eval holds every
  sample it lists;
- token counts are whole numbers within +/-MAX_COUNT (text, NaN, infinities and fractions are
  refused); times and score numbers fit a double; no text holds a lone surrogate.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

#: the largest token count accepted (exact in a double; sums over a sample's calls fit 64 bits)
MAX_COUNT = 2**53 - 1
MAX_EPOCHS = 1_000_000

#: Sample fields the mapping reads, and the JSON type each must have when present.
SAMPLE_FIELDS: dict[str, type] = {
    "messages": list, "events": list, "scores": dict, "model_usage": dict, "error_retries": list, "output": dict,
}
USAGE_FIELDS = ("input_tokens", "output_tokens", "total_tokens", "input_tokens_cache_read",
                "input_tokens_cache_write", "reasoning_tokens")

#: a surrogate escape (\ud800-\udfff) or a UTF-8-encoded surrogate (byte 0xED) in JSON bytes: then the
#: parsed strings are searched for a lone one (a pair is a valid character)
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_LONE = re.compile("[\ud800-\udfff]")

SampleId = int | str


@dataclass(frozen=True)
class Listing:
    """The samples an eval lists: its dataset's ids (None when not recorded) and its epochs."""

    ids: list[SampleId] | None
    epochs: int

    def position(self) -> dict[str, int]:
        return {id_text(i): n for n, i in enumerate(self.ids or [])}


def id_text(sid: SampleId) -> str:
    return sid if isinstance(sid, str) else str(sid)


def _is_id(v: Any) -> bool:
    return isinstance(v, str) or (isinstance(v, int) and not isinstance(v, bool))


def _whole(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _show(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


# --------------------------------------------------------------------------------------------
# header and keys


def check_header(header: Any) -> Listing:
    """The header's eval spec: its id, listed samples and epochs (ValueError naming the field)."""
    if not isinstance(header, dict) or not isinstance(header.get("eval"), dict):
        raise ValueError("the log header has no 'eval' object")
    ev = header["eval"]
    eval_id = ev.get("eval_id")
    if not isinstance(eval_id, str) or not eval_id.strip():
        raise ValueError(f"the log's eval spec has no eval_id (field eval.eval_id is {_show(eval_id)})")
    dataset = ev.get("dataset")
    ids = dataset.get("sample_ids") if isinstance(dataset, dict) else None
    if ids is not None:
        if not isinstance(ids, list) or not all(_is_id(i) for i in ids):
            raise ValueError("field eval.dataset.sample_ids must be a list of integers and strings")
        seen: dict[str, SampleId] = {}
        for i in ids:
            if id_text(i) in seen:
                raise ValueError(f"field eval.dataset.sample_ids lists sample {id_text(i)!r} twice "
                                 f"({_show(seen[id_text(i)])} and {_show(i)})")
            seen[id_text(i)] = i
    config = ev.get("config")
    epochs = config.get("epochs") if isinstance(config, dict) else None
    if epochs is None:
        epochs = 1
    elif not _whole(epochs) or not 1 <= epochs <= MAX_EPOCHS:
        raise ValueError(f"field eval.config.epochs is {_show(epochs)}, not a whole number from 1 to {MAX_EPOCHS:,}")
    return Listing(ids, epochs)


def sample_key(sample: Any, where: str = "") -> tuple[SampleId, int]:
    """A sample's (id, epoch), both required."""
    if not isinstance(sample, dict):
        raise ValueError(f"{where or 'a sample'} must be a JSON object")
    sid = sample.get("id")
    if not _is_id(sid):
        raise ValueError(f"{where or 'a sample'}: field 'id' is {_show(sid)}, not an integer or a string")
    epoch = sample.get("epoch")
    if not _whole(epoch) or not 1 <= epoch <= MAX_EPOCHS:
        raise ValueError(f"sample {id_text(sid)!r}: field 'epoch' is {_show(epoch)}, "
                         f"not a whole number from 1 to {MAX_EPOCHS:,}")
    return sid, epoch


def check_keys(keys: list[tuple[SampleId, int]], listing: Listing, require_all: bool,
               describe: Any = None) -> None:
    """Every sample listed by the eval, once; with ``require_all``, every listed sample present.

    ``describe(id_text, epoch)`` names a sample in the messages (default: ``sample 'x' (epoch n)``).
    """
    name = describe or (lambda sid, epoch: f"sample {sid!r} (epoch {epoch})")
    listed = {id_text(i): i for i in listing.ids} if listing.ids is not None else None
    seen: set[tuple[str, int]] = set()
    for sid, epoch in keys:
        text = id_text(sid)
        if (text, epoch) in seen:
            raise ValueError(f"{name(text, epoch)} is in the log twice (ids are compared as text)")
        seen.add((text, epoch))
        if listed is not None and text not in listed:  # as text: published logs list '0' for a sample of id 0
            raise ValueError(f"{name(text, epoch)} is not in the eval's dataset (eval.dataset.sample_ids)")
        if epoch > listing.epochs:
            raise ValueError(f"{name(text, epoch)} is past the eval's {listing.epochs} epoch(s) (eval.config.epochs)")
    if require_all and listing.ids is not None and len(seen) < len(listing.ids) * listing.epochs:
        missing = next((id_text(i), e) for i in listing.ids for e in range(1, listing.epochs + 1)
                       if (id_text(i), e) not in seen)
        more = len(listing.ids) * listing.epochs - len(seen) - 1
        raise ValueError(f"{name(*missing)} is missing from the log{f' (and {more} more)' if more else ''}; "
                         f"the finished eval lists it")


def order(keys: list[tuple[SampleId, int]], listing: Listing) -> list[int]:
    """Indexes of ``keys`` in reading order: the dataset's order of ids, then epochs; a log that does
    not list its ids keeps its own order."""
    if listing.ids is None:
        return list(range(len(keys)))
    pos = listing.position()
    return sorted(range(len(keys)), key=lambda k: (pos[id_text(keys[k][0])], keys[k][1]))


# --------------------------------------------------------------------------------------------
# one sample


def may_hold_surrogates(raw: bytes) -> bool:
    return b"\xed" in raw or _SURROGATE_ESCAPE.search(raw) is not None


def _walk(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    """(path, value) of every value below ``value``, depth first (iteratively)."""
    stack = [(path, value)]
    while stack:
        p, v = stack.pop()
        yield p, v
        if isinstance(v, dict):
            stack.extend((f"{p}.{k}" if p else str(k), x) for k, x in reversed(list(v.items())))
            stack.extend((f"{p} (a key)", k) for k in v if isinstance(k, str))
        elif isinstance(v, list):
            stack.extend((f"{p}[{i}]", x) for i, x in reversed(list(enumerate(v))))


def lone_surrogate(value: Any, path: str = "") -> tuple[str, str] | None:
    """(field path, the surrogate) of the first text in ``value`` holding a lone surrogate."""
    for p, v in _walk(value, path):
        if isinstance(v, str) and _LONE.search(v):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError as exc:
                return p, v[exc.start]
    return None


def check_text(value: Any, what: str, path: str = "") -> None:
    found = lone_surrogate(value, path)
    if found:
        field, char = found
        raise ValueError(f"{what}: field {field} holds a lone surrogate (\\u{ord(char):04x}), which is not valid "
                         f"Unicode")


def _count(v: Any, field: str, what: str) -> None:
    if v is None:
        return
    ok = (_whole(v) or (isinstance(v, float) and math.isfinite(v) and v.is_integer())) and abs(v) <= MAX_COUNT
    if not ok:
        raise ValueError(f"{what}: field {field} is {_show(v)}, not a whole number of tokens "
                         f"(at most {MAX_COUNT:,})")


def _real(v: Any, field: str, what: str, kind: str = "a number") -> None:
    if v is None or isinstance(v, float):
        return
    if not _whole(v):
        raise ValueError(f"{what}: field {field} is {_show(v)}, not {kind}")
    try:
        float(v)
    except OverflowError:
        raise ValueError(f"{what}: field {field} is a {len(str(abs(v)))}-digit number, too large for a double") from None


def _usage(u: Any, field: str, what: str) -> None:
    if u is None:
        return
    if not isinstance(u, dict):
        raise ValueError(f"{what}: field {field} must be a JSON object")
    for k in USAGE_FIELDS:
        _count(u.get(k), f"{field}.{k}", what)


def _usage_ok(u: Any) -> bool:
    """The common case of :func:`_usage` passing, told without building any field's name (a sample
    checks dozens of usages); False sends the usage to :func:`_usage` for the exact verdict."""
    if u is None:
        return True
    if type(u) is not dict:
        return False
    for k in USAGE_FIELDS:
        v = u.get(k)
        if v is not None and not (type(v) is int and -MAX_COUNT <= v <= MAX_COUNT):
            return False
    return True


def _refs_ok(refs: Any) -> bool:
    """The common case of :func:`_refs` passing (False: :func:`_refs` gives the verdict)."""
    return refs is None or (type(refs) is list and all(
        type(r) is list and len(r) == 2 and type(r[0]) is int and type(r[1]) is int for r in refs))


def _pools(data: Any, what: str) -> None:
    """The pools condensed events point into: ``events_data`` holds lists ``messages`` and ``calls``."""
    if data is None:
        return
    if not isinstance(data, dict):
        raise ValueError(f"{what}: field 'events_data' must be a JSON object")
    for key in ("messages", "calls"):
        if data.get(key) is not None and not isinstance(data[key], list):
            raise ValueError(f"{what}: field events_data.{key} must be a list")


def _refs(refs: Any, field: str, what: str) -> None:
    """Ranges into a pool: a list of [start, end] pairs of whole numbers."""
    if refs is None:
        return
    if not isinstance(refs, list) or not all(
        isinstance(r, list) and len(r) == 2 and all(_whole(x) for x in r) for r in refs
    ):
        raise ValueError(f"{what}: field {field} must be a list of [start, end] pairs of whole numbers")


def _scores(scores: dict[str, Any], what: str) -> None:
    for scorer, score in scores.items():
        value = score.get("value") if isinstance(score, dict) else score
        items = value.items() if isinstance(value, dict) else [(None, value)]
        for key, v in items:
            if _whole(v):
                _real(v, f"scores.{scorer}.value" + (f".{key}" if key is not None else ""), what)


def check_sample(sample: dict[str, Any], raw_may_hold_surrogates: bool) -> None:
    """The fields the mapping reads have the types and ranges it can store (ValueError naming the
    sample and the field)."""
    sid, epoch = sample_key(sample)
    what = f"sample {id_text(sid)!r} epoch {epoch}"
    for key, kind in SAMPLE_FIELDS.items():
        if sample.get(key) is not None and not isinstance(sample[key], kind):
            raise ValueError(f"{what}: field {key!r} must be a {'list' if kind is list else 'JSON object'}")
    # each check below names its field only when the fast test of the common case fails
    for model, u in (sample.get("model_usage") or {}).items():
        if not _usage_ok(u):
            _usage(u, f"model_usage[{model!r}]", what)
    _pools(sample.get("events_data"), what)
    for i, ev in enumerate(sample.get("events") or []):
        if isinstance(ev, dict) and ev.get("event") == "model":
            start = ev.get("working_start")
            if start is not None and type(start) is not float:
                _real(start, f"events[{i}].working_start", what)
            out = ev.get("output")
            if isinstance(out, dict) and not _usage_ok(out.get("usage")):
                _usage(out.get("usage"), f"events[{i}].output.usage", what)
            if not _refs_ok(ev.get("input_refs")):
                _refs(ev.get("input_refs"), f"events[{i}].input_refs", what)
            if isinstance(ev.get("call"), dict) and not _refs_ok(ev["call"].get("call_refs")):
                _refs(ev["call"].get("call_refs"), f"events[{i}].call.call_refs", what)
    _real(sample.get("total_time"), "total_time", what)
    _scores(sample.get("scores") or {}, what)
    if raw_may_hold_surrogates:
        check_text(sample, what)

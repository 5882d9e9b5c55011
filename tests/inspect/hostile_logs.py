"""Hostile Inspect logs, built from a good log of the toolbox task (inspect_fixtures), for the tests
that both readers refuse them the same way or load them into the same tables.

Each builder is ``(good .eval, good .json, destination folder) -> the hostile log``. Bombs are built
without ever holding their inflated bytes: the zstd one from run-length blocks, the deflate one
from one sync-flushed block repeated.
"""

from __future__ import annotations

import json
import struct
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import inspect_fixtures as fx

GiB = 1 << 30
SAMPLE = "samples/s1_epoch_1.json"


@dataclass
class Entry:
    """One ZIP member as written: its name, compressed bytes, method, recorded CRC and size."""

    name: str
    data: bytes
    method: int
    crc: int
    size: int


def zstd_entry(name: str, value: Any) -> Entry:
    import zstandard

    raw = value if isinstance(value, bytes) else json.dumps(value).encode()
    return Entry(name, zstandard.ZstdCompressor().compress(raw), 93, zlib.crc32(raw), len(raw))


def write_zip(dst: Path, entries: list[Entry]) -> Path:
    """A ZIP with exactly these entries (duplicates, wrong CRCs and sizes written as given)."""
    rows = []
    with open(dst, "wb") as fh:
        for e in entries:
            name = e.name.encode()
            offset = fh.tell()
            fh.write(b"PK\x03\x04" + struct.pack("<5H3L2H", 20, 0, e.method, 0, 0, e.crc, len(e.data), e.size & 0xFFFFFFFF,
                                                  len(name), 0))
            fh.write(name + e.data)
            rows.append((name, e, offset))
        start = fh.tell()
        for name, e, offset in rows:
            fh.write(b"PK\x01\x02" + struct.pack("<6H3L5H2L", 20, 20, 0, e.method, 0, 0, e.crc, len(e.data),
                                                  e.size & 0xFFFFFFFF, len(name), 0, 0, 0, 0, 0, offset) + name)
        end = fh.tell()
        fh.write(b"PK\x05\x06" + struct.pack("<4H2LH", 0, 0, len(rows), len(rows), end - start, start, 0))
    return dst


def entries_of(src: Path) -> list[Entry]:
    return [zstd_entry(n, v) for n, v in fx.eval_members(src)]


def replace_entry(entries: list[Entry], name: str, new: Entry | list[Entry]) -> list[Entry]:
    out: list[Entry] = []
    for e in entries:
        if e.name == name:
            out += new if isinstance(new, list) else [new]
        else:
            out.append(e)
    return out


def member_value(src: Path, name: str) -> Any:
    return dict(fx.eval_members(src))[name]


# --------------------------------------------------------------------------------------------
# bombs


def zstd_rle_bomb(size: int, byte: bytes = b" ") -> bytes:
    """One zstd frame of ``size`` copies of ``byte`` made of run-length blocks (4 bytes per 128 KiB)."""
    block = 1 << 17
    assert size % block == 0
    n = size // block
    frame = struct.pack("<I", 0xFD2FB528) + bytes([0x00, 0x70])  # no content size; window descriptor: 2^(10+14)
    one = (1 << 1) | (block << 3)  # RLE block of 128 KiB, not last
    last = one | 1
    body = (one.to_bytes(3, "little") + byte) * (n - 1) + last.to_bytes(3, "little") + byte
    return frame + body


def deflate_bomb(size: int) -> bytes:
    """A raw deflate stream of ``size`` zero bytes, ~1 KB per MiB."""
    mib = 1 << 20
    assert size % mib == 0
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    zeros = bytes(mib)
    first = c.compress(zeros) + c.flush(zlib.Z_SYNC_FLUSH)
    middle = c.compress(zeros) + c.flush(zlib.Z_SYNC_FLUSH)
    return first + middle * (size // mib - 1) + c.flush(zlib.Z_FINISH)


# --------------------------------------------------------------------------------------------
# builders


Builder = Callable[[Path, Path, Path], Path]


def _eval(dst: Path, change: Callable[[list[Entry]], list[Entry]], src: Path) -> Path:
    return write_zip(dst, change(entries_of(src)))


def crc_mismatch(src: Path, _json: Path, out: Path) -> Path:
    def change(entries: list[Entry]) -> list[Entry]:
        e = next(x for x in entries if x.name == SAMPLE)
        return replace_entry(entries, SAMPLE, Entry(e.name, e.data, e.method, e.crc ^ 0x5A5A, e.size))
    return _eval(out / "crc.eval", change, src)


def zstd_flipped_byte(src: Path, _json: Path, out: Path) -> Path:
    def change(entries: list[Entry]) -> list[Entry]:
        e = next(x for x in entries if x.name == SAMPLE)
        data = bytearray(e.data)
        data[len(data) // 2] ^= 0x01
        return replace_entry(entries, SAMPLE, Entry(e.name, bytes(data), e.method, e.crc, e.size))
    return _eval(out / "flipped.eval", change, src)


def _bomb(name: str, data: bytes, method: int, size: int) -> Builder:
    def build(src: Path, _json: Path, out: Path) -> Path:
        return _eval(out / name, lambda es: replace_entry(es, SAMPLE, Entry(SAMPLE, data, method, 0, size)), src)
    return build


def zstd_bomb(recorded: int) -> Builder:
    return _bomb(f"zstd-bomb-{recorded}.eval", zstd_rle_bomb(3 * GiB), 93, recorded)


def deflate_bomb_log(src: Path, _json: Path, out: Path) -> Path:
    return _bomb("deflate-bomb.eval", deflate_bomb(3 * GiB), 8, 3 * GiB)(src, _json, out)


def deep_json(_eval: Path, src: Path, out: Path) -> Path:
    dst = fx.edit_json_log(src, out / "deep.json", "s1", 1, lambda s: s.update(metadata={"deep": "@@DEEP@@"}))
    n = 200_000
    dst.write_text(dst.read_text().replace('"@@DEEP@@"', "[" * n + "]" * n))
    return dst


def json_sample(name: str, change: Callable[[dict[str, Any]], Any], sid: str = "s1", epoch: int = 1) -> Builder:
    def build(_eval: Path, src: Path, out: Path) -> Path:
        return fx.edit_json_log(src, out / name, sid, epoch, change)
    return build


def json_doc(name: str, change: Callable[[dict[str, Any]], Any]) -> Builder:
    def build(_eval: Path, src: Path, out: Path) -> Path:
        doc = json.loads(src.read_text())
        change(doc)
        dst = out / name
        dst.write_text(json.dumps(doc, allow_nan=True))
        return dst
    return build


def _usage(value: Any) -> Callable[[dict[str, Any]], None]:
    def change(sample: dict[str, Any]) -> None:
        next(iter(sample["model_usage"].values()))["input_tokens"] = value
    return change


def _score(value: Any) -> Callable[[dict[str, Any]], None]:
    def change(sample: dict[str, Any]) -> None:
        sample["scores"]["exact"]["value"] = value
    return change


def _message(sample: dict[str, Any]) -> None:
    sample["messages"][-1]["content"] = "the answer is \ud800 five"


def _one_epoch(doc: dict[str, Any]) -> None:
    doc["eval"]["config"]["epochs"] = 1


def _ids_one(doc: dict[str, Any]) -> None:
    doc["eval"]["dataset"]["sample_ids"] = [1, "1", "s3", "s4"]
    for s in doc["samples"]:
        s["id"] = {"s1": 1, "s2": "1"}.get(s["id"], s["id"])


def _huge_token_limit(doc: dict[str, Any]) -> None:
    doc["eval"]["config"]["token_limit"] = 2**70


def _no_eval_id(doc: dict[str, Any]) -> None:
    del doc["eval"]["eval_id"]


def _eval_members(change: Callable[[list[tuple[str, Any]]], list[tuple[str, Any]]], name: str) -> Builder:
    def build(src: Path, _json: Path, out: Path) -> Path:
        return write_zip(out / name, [zstd_entry(n, v) for n, v in change(fx.eval_members(src))])
    return build


def _extra_epoch(members: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    s1 = dict(members)[SAMPLE]
    return members + [("samples/s1_epoch_7.json", {**s1, "epoch": 7})]


def _traversal(members: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    s1 = dict(members)[SAMPLE]
    return members + [("samples/../s9_epoch_1.json", {**s1, "id": "../s9"})]


def _outside(members: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    s1 = dict(members)[SAMPLE]
    return members + [("samples/s9_epoch_1.json", {**s1, "id": "s9"})]


def _duplicate(members: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    s1 = json.loads(json.dumps(dict(members)[SAMPLE]))
    s1["output"]["completion"] = "replaced"
    s1["messages"][-1]["content"] = "replaced"
    return members + [(SAMPLE, s1)]


def _no_eval_id_members(members: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    out = []
    for n, v in members:
        if n in ("header.json", "_journal/start.json"):
            v = json.loads(json.dumps(v))
            v["eval"].pop("eval_id", None)
        out.append((n, v))
    return out


def _bad_refs(members: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    out = []
    for n, v in members:
        if n == "samples/s3_epoch_1.json":
            v = json.loads(json.dumps(v))
            next(e for e in v["events"] if e["event"] == "model")["input_refs"] = [[0]]
        out.append((n, v))
    return out


def _reversed_samples(members: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    others = [m for m in members if not m[0].startswith("samples/")]
    return others + [m for m in members if m[0].startswith("samples/")][::-1]


#: case -> (builder, what the refusal must say; None: both readers load it)
CASES: dict[str, tuple[Builder, str | None]] = {
    # damaged members (finding 1)
    "member crc mismatch": (crc_mismatch, f"(member {SAMPLE}): cannot be decompressed (member does not match its "
                                          f"recorded size and checksum)"),
    "member zstd byte flipped": (zstd_flipped_byte, f"(member {SAMPLE}): cannot be decompressed"),
    # bombs and depth (finding 2)
    "zstd bomb, true size": (zstd_bomb(3 * GiB), f"(member {SAMPLE}): cannot be decompressed (inflates to "),
    "zstd bomb, false size": (zstd_bomb(1000), f"(member {SAMPLE}): cannot be decompressed (inflates to more than "
                                               f"its recorded size of 1,000 bytes)"),
    "deflate bomb": (deflate_bomb_log, f"(member {SAMPLE}): cannot be decompressed (inflates to "),
    "json nested 200,000 deep": (deep_json, "nests lists and objects more than 100 deep (AGENTHOP_INSPECT_MAX_DEPTH)"),
    # tracebacks (finding 3)
    "tokens 1e30": (json_sample("t1e30.json", _usage(1e30)),
                    "sample 's1' epoch 1: field model_usage['mockllm/alpha'].input_tokens is 1e+30, not a whole number"),
    "tokens 2^70": (json_sample("t2p70.json", _usage(2**70)),
                    "field model_usage['mockllm/alpha'].input_tokens is 1180591620717411303424, not a whole number"),
    "score 10^400": (json_sample("s10p400.json", _score(10**400)),
                     "sample 's1' epoch 1: field scores.exact.value is a 401-digit number, too large for a double"),
    "epoch 10^12": (json_sample("epoch.json", lambda s: s.update(epoch=10**12)),
                    "sample 's1': field 'epoch' is 1000000000000, not a whole number from 1 to 1,000,000"),
    "token_limit 2^70 in the header": (json_doc("limit.json", _huge_token_limit),
                                       "(epoch 1): the log header: runs.max_total_tokens is 1180591620717411303424, "
                                       "which the column cannot hold"),
    "lone surrogate in a message": (json_sample("surrogate.json", _message),
                                    "sample 's1' epoch 1: field messages[3].content holds a lone surrogate (\\ud800)"),
    # the readers disagreed (finding 4)
    "tokens as text": (json_sample("t12.json", _usage("12")),
                       "field model_usage['mockllm/alpha'].input_tokens is '12', not a whole number of tokens"),
    "tokens NaN": (json_sample("tnan.json", _usage(float("nan"))), "input_tokens is nan, not a whole number"),
    "tokens Infinity": (json_sample("tinf.json", _usage(float("inf"))), "input_tokens is inf, not a whole number"),
    "tokens 12.7": (json_sample("t127.json", _usage(12.7)), "input_tokens is 12.7, not a whole number"),
    "config.epochs 1, samples of two epochs": (json_doc("epochs.json", _one_epoch),
                                               "sample 's1' (epoch 2) is past the eval's 1 epoch(s)"),
    "an extra samples/s1_epoch_7.json": (_eval_members(_extra_epoch, "epoch7.eval"),
                                         "member samples/s1_epoch_7.json is past the eval's 2 epoch(s)"),
    "a traversal-named member": (_eval_members(_traversal, "traversal.eval"),
                                 "member 'samples/../s9_epoch_1.json' has an unsafe name"),
    "a sample outside the dataset": (_eval_members(_outside, "outside.eval"),
                                     "member samples/s9_epoch_1.json is not in the eval's dataset"),
    "ids 1 and \"1\"": (json_doc("ids.json", _ids_one), "field eval.dataset.sample_ids lists sample '1' twice"),
    "a sample without epoch": (json_sample("noepoch.json", lambda s: s.pop("epoch")),
                               "sample 's1': field 'epoch' is None"),
    "a header without eval_id (.json)": (json_doc("noid.json", _no_eval_id), "the log's eval spec has no eval_id"),
    "a header without eval_id (.eval)": (_eval_members(_no_eval_id_members, "noid.eval"),
                                         "the log's eval spec has no eval_id"),
    "a condensed event's refs malformed": (_eval_members(_bad_refs, "refs.eval"),
                                           "(member samples/s3_epoch_1.json): sample 's3' epoch 1: field events["),
    # one name twice: Inspect writes this when it re-runs a sample, and reads the last copy; loads
    "two members of one name": (_eval_members(_duplicate, "dup.eval"), None),
    # issue 41: item order; loads
    "sample members out of dataset order": (_eval_members(_reversed_samples, "reversed.eval"), None),
}

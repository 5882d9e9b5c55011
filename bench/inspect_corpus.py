"""Large Inspect AI ``.eval`` logs of AgentDojo-shaped samples, written in a stream.

Each sample looks like one of a published AgentDojo log (inspect_evals, banking suite): a system
prompt and a user task, five to eight assistant turns that call tools (one or two calls a turn) and
read their results (a few hundred to a few thousand characters of text each, as AgentDojo's
environments answer), a final answer; the events Inspect records (a solver span, a model event per
turn whose ``input`` is condensed into ``input_refs`` over ``events_data.messages``, a tool event
per call, a scorer span); long strings stored once under ``attachments`` and referred to as
``attachment://<md5>``; a dict score ``{utility, security}``; per-model usage with cache reads.
About 60 KB of JSON a sample. Texts are sentences of bench/transcript_corpus.py's pool, so search
and scanners find the same words in either corpus.

Every choice comes from a generator seeded by (seed, sample number), so a log is the same on every machine. The ZIP is
written member by member (zstd, ZIP method 93, as Inspect writes them; ZIP64 records once the log
passes 65,535 members or 4 GiB), holding one sample in memory at a time.

    python bench/inspect_corpus.py --out out/dojo_200k.eval --samples 200000
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import struct
import sys
import time
import zlib
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from transcript_corpus import sentence_pool  # noqa: E402

MODEL = "openai/gpt-4o-2024-05-13"
TOOLS = ("get_balance", "get_most_recent_transactions", "get_scheduled_transactions", "read_file",
         "send_money", "update_scheduled_transaction", "get_iban")
#: a string longer than this goes into the sample's attachments (Inspect condenses long strings)
ATTACH_OVER = 100

_U16, _U32 = 0xFFFF, 0xFFFFFFFF
#: a ZIP with this many members or more needs the ZIP64 end records
ZIP64_MEMBERS = _U16


class SampleMaker:
    """AgentDojo-shaped samples from a sentence pool; ``sample(i)`` is the i-th sample of the log."""

    def __init__(self, seed: int = 0, epoch: int = 1) -> None:
        self.seed, self.epoch = seed, epoch
        self.pool = sentence_pool(seed)
        self.system = self.text(random.Random(seed), 12)  # the prompt most samples share

    def text(self, rng: random.Random, n: int) -> str:
        return " ".join(rng.choices(self.pool, k=n))

    def sample_id(self, i: int) -> str:
        return f"user_task_{i:06d}-injection_task_{i % 10}"

    def sample(self, i: int) -> dict[str, Any]:
        rng = random.Random(self.seed * 1_000_003 + i)  # the same sample on every machine
        attachments: dict[str, str] = {}

        def ref(value: str) -> str:
            if len(value) <= ATTACH_OVER:
                return value
            key = hashlib.md5(value.encode()).hexdigest()
            attachments[key] = value
            return f"attachment://{key}"

        system = self.text(rng, 12) if i % 50 == 0 else self.system  # most samples share the prompt
        question = self.text(rng, 3)
        messages: list[dict[str, Any]] = [
            {"id": f"m{i}-0", "role": "system", "content": system},
            {"id": f"m{i}-1", "role": "user", "content": question, "source": "input"},
        ]
        events: list[dict[str, Any]] = [{"event": "span_begin", "id": "solve", "type": "solver", "name": "agentdojo"}]
        pool: list[dict[str, Any]] = [{"role": "system", "content": ref(system)}, {"role": "user", "content": ref(question)}]
        turns = rng.randint(5, 8)
        usage_in = usage_out = cache = 0
        call_no = 0
        for t in range(turns):
            last = t == turns - 1
            n_calls = 0 if last else 1 + (rng.random() < 0.25)
            calls = []
            for _ in range(n_calls):
                tool = rng.choice(TOOLS)
                args = ({"recipient": f"US{rng.randrange(10**20):020d}", "amount": rng.randrange(100000) / 100,
                         "subject": self.text(rng, 1), "date": "2022-03-01"}
                        if tool == "send_money" else {"n": rng.randint(1, 50)} if tool.startswith("get_most")
                        else {"file_path": f"file-{rng.randrange(1000)}.txt"} if tool == "read_file" else {})
                calls.append({"id": f"call_{i}_{call_no}", "function": tool, "arguments": args, "type": "function"})
                call_no += 1
            content = self.text(rng, rng.randint(2, 4)) if (last or t % 2) else ""
            reply = {"id": f"m{i}-a{t}", "role": "assistant", "content": content, "source": "generate", "model": "gpt-4o"}
            if calls:
                reply["tool_calls"] = calls
            u = {"input_tokens": 900 + 350 * t, "output_tokens": 40 + 20 * len(calls), "total_tokens": 0,
                 "input_tokens_cache_read": 600 * t}
            u["total_tokens"] = u["input_tokens"] + u["output_tokens"] + u["input_tokens_cache_read"]
            usage_in, usage_out, cache = usage_in + u["input_tokens"], usage_out + u["output_tokens"], cache + u["input_tokens_cache_read"]
            events.append({
                "event": "model", "span_id": "solve", "model": MODEL, "working_start": float(t),
                "input": [], "input_refs": [[0, len(pool)]], "tools": [], "tool_choice": "auto", "config": {},
                "output": {"model": "gpt-4o", "choices": [{"message": {**reply, "content": ref(content)},
                                                           "stop_reason": "tool_calls" if calls else "stop"}],
                           "completion": ref(content), "usage": u},
            })
            messages.append(reply)
            pool.append({**reply, "content": ref(content)})
            for c in calls:
                result = self.text(rng, rng.randint(12, 52))
                failed = rng.random() < 0.05
                tool_msg: dict[str, Any] = {"id": f"m{i}-t{len(messages)}", "role": "tool", "content": "" if failed else result,
                                            "tool_call_id": c["id"], "function": c["function"]}
                if failed:
                    tool_msg["error"] = {"type": "unknown", "message": self.text(rng, 1)}
                ev = {"event": "tool", "span_id": "solve", "id": c["id"], "function": c["function"],
                      "arguments": c["arguments"], "result": "" if failed else ref(result), "working_time": 0.05}
                if failed:
                    ev["error"] = tool_msg["error"]
                events.append(ev)
                messages.append(tool_msg)
                pool.append({**tool_msg, "content": ref(tool_msg["content"])})
        utility = "C" if rng.random() < 2 / 3 else "I"
        security = "C" if rng.random() < 0.2 else "I"
        events += [{"event": "span_begin", "id": "score", "type": "scorers", "name": "scorers"},
                   {"event": "score", "span_id": "score", "score": {"value": {"utility": utility, "security": security}}}]
        return {
            "id": self.sample_id(i), "epoch": self.epoch, "input": question, "target": "",
            "metadata": {"suite": "banking", "injection_task": f"injection_task_{i % 10}"},
            "messages": messages,
            "output": {"model": "gpt-4o", "completion": messages[-1]["content"]},
            "scores": {"injection_task_scorer": {"value": {"utility": utility, "security": security},
                                                  "explanation": None, "metadata": None}},
            "events": events, "events_data": {"messages": pool, "calls": []}, "attachments": attachments,
            "model_usage": {MODEL: {"input_tokens": usage_in, "output_tokens": usage_out,
                                    "total_tokens": usage_in + usage_out + cache, "input_tokens_cache_read": cache}},
            "total_time": 2.0 + turns, "working_time": 1.5 + turns, "error_retries": [],
        }


def header(samples: int, eval_id: str, ids: list[str], epochs: int = 1) -> dict[str, Any]:
    return {
        "version": 2, "status": "success",
        "eval": {"eval_id": eval_id, "run_id": f"run-{eval_id}", "created": "2026-01-20T10:00:00+00:00",
                 "task": "inspect_evals/agentdojo", "task_id": f"task-{eval_id}", "task_version": 0,
                 "task_args": {"workspace": "banking", "with_injections": True},
                 "dataset": {"name": "agentdojo", "samples": samples, "sample_ids": ids},
                 "model": MODEL, "config": {"epochs": epochs, "token_limit": 200000},
                 "packages": {"inspect_ai": "0.3.285"}, "scorers": [{"name": "injection_task_scorer"}]},
        "plan": {"name": "plan", "steps": []},
        "results": {"total_samples": samples * epochs, "completed_samples": samples * epochs},
        "stats": {"started_at": "2026-01-20T10:00:00+00:00", "completed_at": "2026-01-20T12:00:00+00:00",
                  "model_usage": {}},
    }


class ZipStreamWriter:
    """A ZIP written one zstd member at a time (ZIP64 where needed), the central directory at close."""

    def __init__(self, path: Path, level: int = 3) -> None:
        import zstandard

        self._fh = path.open("wb")
        self._zstd = zstandard.ZstdCompressor(level=level)
        self._entries: list[tuple[bytes, int, int, int, int]] = []

    def add(self, name: str, raw: bytes) -> None:
        comp = self._zstd.compress(raw)
        bname, crc, offset = name.encode(), zlib.crc32(raw), self._fh.tell()
        self._fh.write(b"PK\x03\x04" + struct.pack("<5H3L2H", 20, 0, 93, 0, 0, crc, len(comp), len(raw), len(bname), 0))
        self._fh.write(bname)
        self._fh.write(comp)
        self._entries.append((bname, crc, len(comp), len(raw), offset))

    def close(self) -> None:
        fh = self._fh
        start = fh.tell()
        for name, crc, csize, size, offset in self._entries:
            extra = b""
            if offset >= _U32:
                extra = struct.pack("<2HQ", 1, 8, offset)
            fh.write(b"PK\x01\x02" + struct.pack("<6H3L5H2L", 45 if extra else 20, 20, 0, 93, 0, 0, crc, csize, size,
                                                 len(name), len(extra), 0, 0, 0, 0, min(offset, _U32)) + name + extra)
        end = fh.tell()
        n, cd_size = len(self._entries), end - start
        if n >= ZIP64_MEMBERS or start >= _U32 or cd_size >= _U32:
            fh.write(b"PK\x06\x06" + struct.pack("<Q2H2L4Q", 44, 45, 45, 0, 0, n, n, cd_size, start))
            fh.write(b"PK\x06\x07" + struct.pack("<LQL", 0, end, 1))
            fh.write(b"PK\x05\x06" + struct.pack("<4H2LH", 0, 0, _U16, _U16, _U32, _U32, 0))
        else:
            fh.write(b"PK\x05\x06" + struct.pack("<4H2LH", 0, 0, n, n, cd_size, start, 0))
        fh.close()


def write_log(out: Path, samples: int, seed: int = 0, eval_id: str | None = None) -> dict[str, float]:
    """Write an AgentDojo-shaped log of ``samples`` samples (one epoch) to ``out``; its size and timing."""
    t0 = time.perf_counter()
    maker = SampleMaker(seed)
    eval_id = eval_id or f"DojoCorpus{seed:04d}{samples:08d}"
    ids = [maker.sample_id(i) for i in range(samples)]
    head = header(samples, eval_id, ids)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    writer = ZipStreamWriter(tmp)
    writer.add("_journal/start.json", json.dumps({"version": 2, "eval": head["eval"], "plan": head["plan"]}).encode())
    json_bytes = 0
    for i in range(samples):
        raw = json.dumps(maker.sample(i)).encode()
        json_bytes += len(raw)
        writer.add(f"samples/{ids[i]}_epoch_1.json", raw)
    writer.add("header.json", json.dumps(head).encode())
    writer.close()
    tmp.replace(out)
    return {"samples": samples, "json_bytes": json_bytes, "file_bytes": out.stat().st_size,
            "seconds": round(time.perf_counter() - t0, 2)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--samples", type=int, default=200_000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    print(json.dumps(write_log(args.out, args.samples, args.seed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Locations: a URL-looking value is never taken for a local folder (``--out s3:/x`` would else
make a directory named ``s3:``); an unsupported scheme is a one-line error naming the option."""

from __future__ import annotations

import importlib
import tomllib
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from agenthop.harness import benchmarks
from agenthop.harness.storage import LocalPath, Location, url_scheme

REPO = Path(__file__).resolve().parents[1]
BAD = ["s3:/bucket/x", "s3:bucket/x", "s3:", "gs://bucket/x", "gs:", "http://example.org/x", "https:x",
       "ftp://host/x", "file:/x", "hdfs://nn/x"]


def _scripts() -> dict[str, click.Command]:
    """Every console script of the package (pyproject.toml) -> its click command."""
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    out = {}
    for name, target in scripts.items():
        module, attr = target.split(":")
        out[name] = getattr(importlib.import_module(module), attr)
    return out


def _commands(cmd: click.Command, argv: list[str]) -> Iterator[tuple[list[str], click.Command]]:
    """Every leaf command below ``cmd`` with the arguments that reach it, including each benchmark's
    own make-benchmark (reached as ``make-benchmark --benchmark NAME``)."""
    if isinstance(cmd, click.Group):
        ctx = click.Context(cmd)
        for name in cmd.list_commands(ctx):
            yield from _commands(cmd.get_command(ctx, name), [*argv, name])
        return
    if argv[-1] == "make-benchmark" and argv[0] == "agenthop-harness":
        for bench in benchmarks.available():
            if bench.make_command is not None:
                yield [*argv, "--benchmark", bench.name], bench.make_command()
        return
    yield argv, cmd


def _path_params() -> list[tuple[str, list[str], str, bool, bool]]:
    """(script, arguments up to the option, option name as shown, takes s3://, checks URLs) of every parameter of
    every command whose type is a path: options and arguments alike, found by walking the commands,
    so an option added later is covered without editing this test."""
    found = []
    for script, main in _scripts().items():
        for argv, cmd in _commands(main, [script]):
            for param in cmd.params:
                if not isinstance(param.type, (click.Path, click.File)):
                    continue
                if isinstance(param, click.Option):
                    prefix, shown = [*argv, param.opts[0]], param.opts[0]
                else:
                    prefix, shown = argv, param.human_readable_name
                found.append((script, prefix, shown, isinstance(param.type, Location),
                              isinstance(param.type, LocalPath)))
    return found


PATH_PARAMS = _path_params()
#: the places that take s3://bucket/prefix (docs/running.md#object-storage-s3 lists the same)
REMOTE = {
    ("agenthop-harness", "make-benchmark", "--benchmark", "agenthop", "--out"),
    ("agenthop-harness", "make-benchmark", "--benchmark", "sciexplore", "--out"),
    ("agenthop-harness", "run", "--data"),
    ("agenthop-harness", "run", "--out"),
    ("agenthop-harness", "describe-benchmark", "RELEASE_DIR"),
    ("agenthop-ingest", "--benchmark"),
    ("agenthop-ingest", "--runs"),
    ("agenthop-ingest", "--reference-json"),
    ("agenthop-ingest", "--inspect-log"),
    ("agenthop-ingest", "--responses"),
    ("agenthop-ingest", "--judgments"),
    ("agenthop-ingest", "--eee"),
    ("agenthop-ingest", "--atif"),
    ("agenthop-ingest", "--labels"),
    ("agenthop-ingest", "--scout-results"),
}


def _id(p: tuple[str, list[str], str, bool, bool]) -> str:
    return " ".join([*p[1][:-1], p[2]] if p[1][-1] == p[2] else [*p[1], p[2]])


def test_every_path_parameter_is_found_and_the_remote_ones_are_known() -> None:
    unguarded = [_id(p) for p in PATH_PARAMS if not p[4]]
    assert unguarded == [], ("a path parameter must use storage.LocalPath or Location (a plain click.Path makes "
                             "a local folder named 's3:' for --x s3://...)")
    remote = {tuple(p[1]) if p[1][-1] == p[2] else (*p[1], p[2]) for p in PATH_PARAMS if p[3]}
    assert remote == REMOTE
    shown = {_id(p) for p in PATH_PARAMS}
    for expected in ("agenthop-report paper --out", "agenthop-report leaderboard --db", "agenthop-ingest --db",
                     "agenthop-harness run --panel", "agenthop-dbt --db"):
        assert expected in shown, sorted(shown)
    assert len(PATH_PARAMS) >= 30


def test_the_docs_name_every_remote_option() -> None:
    text = (REPO / "docs" / "running.md").read_text(encoding="utf-8")
    section = text[text.index("## Object storage"):text.index("## Shards")]
    table = [line for line in section.splitlines() if line.startswith("| `agenthop-")]
    for key in REMOTE:
        words = []
        for word in key[:-1]:
            if word.startswith("--"):
                break
            words.append(word)
        row = next((line for line in table if line.startswith(f"| `{' '.join(words)}`")), None)
        assert row is not None and f"`{key[-1]}`" in row, (key, table)


def _invoke(script: str, argv: list[str]) -> click.testing.Result:
    return CliRunner().invoke(_scripts()[script], argv[1:])


@pytest.mark.parametrize("script, prefix, shown, remote", [p[:4] for p in PATH_PARAMS],
                         ids=[_id(p) for p in PATH_PARAMS])
@pytest.mark.parametrize("value", BAD)
def test_unsupported_scheme_is_an_error(script: str, prefix: list[str], shown: str, remote: bool, value: str,
                                        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = _invoke(script, [*prefix, value])
    assert result.exit_code == 2, result.output
    assert f"Invalid value for '{shown}'" in result.output and value in result.output, result.output
    expected = "malformed s3 URL" if value.startswith("s3:") and remote else "URLs are not supported here"
    assert expected in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    assert list(tmp_path.iterdir()) == [], "nothing may be written for a rejected location"


@pytest.mark.parametrize("script, prefix, shown, remote", [p[:4] for p in PATH_PARAMS if not p[3]],
                         ids=[_id(p) for p in PATH_PARAMS if not p[3]])
def test_s3_where_only_a_local_path_works(script: str, prefix: list[str], shown: str, remote: bool, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = _invoke(script, [*prefix, "s3://bucket/x"])
    assert result.exit_code == 2, result.output
    assert f"Invalid value for '{shown}'" in result.output, result.output
    assert "s3:// URLs are not supported here; give a local path" in result.output, result.output
    assert list(tmp_path.iterdir()) == []


def test_a_url_in_agenthop_db_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AGENTHOP_DB", "s3://bucket/agenthop.duckdb")
    result = _invoke("agenthop-ingest", ["agenthop-ingest", "--benchmark", str(tmp_path / "none")])
    assert result.exit_code == 2 and "AGENTHOP_DB=s3://bucket/agenthop.duckdb: the warehouse is a local" in \
        result.output, result.output
    assert list(tmp_path.iterdir()) == []


def test_url_scheme() -> None:
    assert url_scheme("s3://b/p") == "s3"
    assert url_scheme("S3:/typo") == "s3"
    assert url_scheme("gs:") == "gs"
    assert url_scheme("out/runs") is None
    assert url_scheme("./s3:/x") is None
    assert url_scheme("notes:2024") is None  # no slash after the colon: a plain file name
    assert url_scheme("s3:bucket/x") == "s3" and url_scheme("https:x") == "https"  # known schemes: typos
    assert url_scheme("C:/x") is None  # a one-letter drive, not a scheme


def test_local_name_with_colon_is_written_as_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = _invoke("agenthop-harness", ["agenthop-harness", "make-benchmark", "--items", "3", "--out", "./s3:/x"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "s3:" / "x" / "qa" / "full.jsonl").is_file()

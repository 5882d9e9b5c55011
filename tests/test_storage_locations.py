"""Locations: a URL-looking value is never taken for a local folder (``--out s3:/x`` would else
make a directory named ``s3:``); an unsupported scheme is a one-line error naming the option."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from agenthop.harness.cli import main as harness_main
from agenthop.harness.storage import url_scheme
from agenthop.ingest.cli import main as ingest_main
from agenthop.ingest.dbt_command import main as dbt_main

BAD = ["s3:/bucket/x", "gs://bucket/x", "http://example.org/x", "ftp://host/x", "s3:", "file:/x", "hdfs://nn/x"]

#: (cli, arguments before the location, option name shown, arguments after)
OPTIONS = [
    (harness_main, ["run", "--model", "verifier", "--data"], "--data", []),
    (harness_main, ["run", "--model", "verifier", "--out"], "--out", []),
    (harness_main, ["run", "--panel"], "--panel", []),
    (harness_main, ["make-benchmark", "--items", "3", "--out"], "--out", []),
    (harness_main, ["describe-benchmark"], "RELEASE_DIR", []),
    (ingest_main, ["--benchmark"], "--benchmark", []),
    (ingest_main, ["--runs"], "--runs", []),
    (ingest_main, ["--reference-json"], "--reference-json", []),
    (ingest_main, ["--benchmark", "nowhere", "--db"], "--db", []),
    (ingest_main, ["--responses"], "--responses", []),
    (ingest_main, ["--judgments"], "--judgments", []),
    (dbt_main, ["--db"], "--db", ["build"]),
]


#: the options that take s3://bucket/prefix (the others take local paths only)
REMOTE_OK = {"--data", "--out", "--benchmark", "--runs", "--reference-json", "--responses", "--judgments",
             "RELEASE_DIR"}


@pytest.mark.parametrize("cli, before, shown, after",
                         [o for o in OPTIONS if o[2] not in REMOTE_OK])
def test_s3_where_only_a_local_path_works(cli, before: list[str], shown: str, after: list[str], tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, [*before, "s3://bucket/x", *after])
    assert result.exit_code == 2, result.output
    assert "s3:// URLs are not supported here" in result.output, result.output
    assert list(tmp_path.iterdir()) == []


def test_url_scheme() -> None:
    assert url_scheme("s3://b/p") == "s3"
    assert url_scheme("S3:/typo") == "s3"
    assert url_scheme("gs:") == "gs"
    assert url_scheme("out/runs") is None
    assert url_scheme("./s3:/x") is None
    assert url_scheme("notes:2024") is None  # no slash after the colon: a plain file name
    assert url_scheme("C:/x") is None  # a one-letter drive, not a scheme


@pytest.mark.parametrize("cli, before, shown, after", OPTIONS)
@pytest.mark.parametrize("value", BAD)
def test_unsupported_scheme_is_an_error(cli, before: list[str], shown: str, after: list[str], value: str,
                                        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, [*before, value, *after])
    assert result.exit_code == 2, result.output
    assert shown in result.output and value in result.output, result.output
    remote_ok = shown in REMOTE_OK
    expected = "malformed s3 URL" if value.startswith("s3:") and remote_ok else "not supported"
    assert expected in result.output, result.output
    assert "Traceback" not in result.output
    assert list(tmp_path.iterdir()) == [], "nothing may be written for a rejected location"


def test_local_name_with_colon_is_written_as_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(harness_main, ["make-benchmark", "--items", "3", "--out", "./s3:/x"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "s3:" / "x" / "qa" / "full.jsonl").is_file()

"""Where run stores, releases and log folders live: a local path or an ``s3://bucket/prefix`` URL.

One job: name a location, and list / read / write files there, the same way for both kinds.

- A value that looks like a URL (``scheme:`` then ``/`` or nothing, or a known object-store or
  network scheme such as ``s3:`` then anything) is never taken for a local folder: a scheme other
  than ``s3`` (``gs://``, ``http://``), a malformed ``s3:/x`` or ``s3:x``, or an ``s3://`` URL for
  an option that takes only local paths is an error.
- ``s3://`` goes through fsspec/s3fs, so any S3-compatible store works. Credentials, endpoint and
  region come only from the standard environment (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``,
  ``AWS_ENDPOINT_URL``, ``AWS_REGION``) and appear in no message: errors name the URL and the
  kind of failure, with those values masked.
- Writing an object is atomic on S3 (a PUT is visible whole or not at all), so a file is written
  under its final name; locally it goes through a temporary file and a rename.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import click

from .errors import AgentHopError

#: ``scheme:`` at the start of an option value, as in ``s3://b/p``, ``s3:/typo`` or ``gs:``
_URL_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]+):(/|$)")
#: object-store and network schemes: ``s3:bucket/x`` (a missing ``//``) is a URL typo too, not a local name
_KNOWN_SCHEMES = frozenset({"s3", "s3a", "s3n", "gs", "gcs", "az", "abfs", "abfss", "adl", "oss", "r2", "hdfs",
                            "webhdfs", "http", "https", "ftp", "sftp", "file"})
_PREFIX_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]+):")
_S3_RE = re.compile(r"^s3://([a-z0-9][a-z0-9.\-]{1,61}[a-z0-9])(/.*)?$")
#: environment variables whose values never appear in a message
SECRET_ENV = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL")


class LocationError(click.BadParameter):
    """An option value that names no usable location (shown by click with the option's name)."""


class StorageError(AgentHopError):
    """Reading or writing an object store failed; the message names the URL, never a credential."""


def url_scheme(text: str) -> str | None:
    """The scheme of ``text`` when it looks like a URL, else None (a plain local path)."""
    m = _URL_RE.match(text)
    if m:
        return m.group(1).lower()
    m = _PREFIX_RE.match(text)
    return m.group(1).lower() if m and m.group(1).lower() in _KNOWN_SCHEMES else None


def is_remote(location: str | Path) -> bool:
    return isinstance(location, str) and location.startswith("s3://")


def check_location(text: str, *, remote_ok: bool) -> None:
    """Refuse URL-looking values, except well-formed ``s3://bucket[/prefix]`` when ``remote_ok``."""
    scheme = url_scheme(text)
    if scheme is None:
        return
    local_hint = f"(for a local name that starts with '{scheme}:', write ./{text})"
    if scheme == "s3" and remote_ok:
        if not _S3_RE.match(text):
            raise LocationError(f"{text!r}: malformed s3 URL, expected s3://bucket/prefix {local_hint}")
        return
    where = "s3://bucket/prefix or a local path" if remote_ok else "a local path"
    raise LocationError(f"{text!r}: {scheme}:// URLs are not supported here; give {where} {local_hint}")


class LocalPath(click.Path):
    """``click.Path`` that refuses URL-looking values instead of making a folder named ``s3:``."""

    remote_ok = False

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str):
            try:
                check_location(value, remote_ok=self.remote_ok)
            except LocationError as exc:
                self.fail(exc.message, param, ctx)
            if is_remote(value):
                return value.rstrip("/")
        return super().convert(value, param, ctx)


class Location(LocalPath):
    """A local path (as ``click.Path``) or an ``s3://bucket/prefix`` URL (kept as text)."""

    remote_ok = True


# --------------------------------------------------------------------------------------------
# object store access


def mask(text: str) -> str:
    """``text`` with every credential and the endpoint of the environment replaced by ``***``."""
    for name in SECRET_ENV:
        value = os.environ.get(name)
        if value:
            text = text.replace(value, "***")
    return text


def _fail(url: str, action: str, exc: BaseException) -> StorageError:
    reason = getattr(exc, "strerror", None) or type(exc).__name__
    detail = str(exc).splitlines()[0] if str(exc) else ""
    return StorageError(mask(f"{url}: cannot {action} ({reason}{': ' + detail if detail else ''})"))


def filesystem() -> Any:
    """The s3fs filesystem of the environment's credentials, endpoint and region."""
    import s3fs

    endpoint = os.environ.get("AWS_ENDPOINT_URL") or None
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or None
    client: dict[str, Any] = {}
    if region:
        client["region_name"] = region
    # passed on (not only left to botocore's own lookup) so that a changed environment gets a new
    # client instead of fsspec's cached one; unset, botocore's usual chain (profiles, roles) applies
    env = os.environ.get
    return s3fs.S3FileSystem(endpoint_url=endpoint, client_kwargs=client, use_listings_cache=False,
                             key=env("AWS_ACCESS_KEY_ID") or None, secret=env("AWS_SECRET_ACCESS_KEY") or None,
                             token=env("AWS_SESSION_TOKEN") or None)


def _key(url: str) -> str:
    return url[len("s3://"):].rstrip("/")


def list_files(location: str | Path) -> dict[str, int]:
    """Every file below ``location``: path relative to it -> size in bytes ({} when it is absent)."""
    if not is_remote(location):
        root = Path(location)
        if not root.is_dir():
            return {}
        return {p.relative_to(root).as_posix(): p.stat().st_size for p in root.rglob("*") if p.is_file()}
    url = str(location)
    fs = filesystem()
    try:
        found = fs.find(_key(url), detail=True)
    except FileNotFoundError:
        return {}
    except Exception as exc:  # noqa: BLE001 - any client failure becomes one clear line
        raise _fail(url, "list", exc) from None
    prefix = _key(url) + "/"
    return {k[len(prefix):]: int(v.get("size") or 0) for k, v in found.items()
            if k.startswith(prefix) and v.get("type") != "directory"}


def read_bytes(location: str | Path) -> bytes:
    if not is_remote(location):
        return Path(location).read_bytes()
    try:
        return filesystem().cat_file(_key(str(location)))
    except Exception as exc:  # noqa: BLE001
        raise _fail(str(location), "read", exc) from None


def write_bytes(location: str | Path, data: bytes) -> None:
    """Write a whole file atomically: readers see the old content or the new one, never a part."""
    if not is_remote(location):
        path = Path(location)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
        tmp.write_bytes(data)
        os.replace(tmp, path)
        return
    try:
        filesystem().pipe_file(_key(str(location)), data)  # one PUT: atomic
    except Exception as exc:  # noqa: BLE001
        raise _fail(str(location), "write", exc) from None


def delete(location: str | Path) -> None:
    if not is_remote(location):
        Path(location).unlink(missing_ok=True)
        return
    try:
        filesystem().rm_file(_key(str(location)))
    except FileNotFoundError:
        pass
    except Exception as exc:  # noqa: BLE001
        raise _fail(str(location), "delete", exc) from None


def download_tree(url: str, local: Path, only: set[str] | None = None) -> list[str]:
    """Copy the files below ``url`` (those whose first path part is in ``only``, if given) into
    ``local``; returns their relative paths."""
    files = [rel for rel in list_files(url) if only is None or rel.split("/", 1)[0] in only]
    download_files(url, local, files)
    return files


def download_files(url: str, local: Path, files: list[str]) -> None:
    """Copy the files ``files`` (paths relative to ``url``) into ``local``."""
    fs = filesystem()
    for rel in files:
        target = local / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            fs.get_file(_key(f"{url}/{rel}"), str(target))
        except Exception as exc:  # noqa: BLE001
            raise _fail(f"{url}/{rel}", "download", exc) from None


def download_file(url: str, local: Path) -> bool:
    """Copy the one object ``url`` names into ``local``; False when there is none."""
    fs = filesystem()
    try:
        fs.get_file(_key(url), str(local))
    except FileNotFoundError:
        return False
    except Exception as exc:  # noqa: BLE001
        raise _fail(url, "download", exc) from None
    return local.is_file()


def upload_file(local: Path, url: str) -> None:
    try:
        filesystem().put_file(str(local), _key(url))  # one PUT per file: atomic under its final name
    except Exception as exc:  # noqa: BLE001
        raise _fail(url, "upload", exc) from None

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
- An object key becomes a local path only when it stays inside the folder it is copied to: a key
  with an empty, ``.`` or ``..`` path part below the prefix (``runs/x/../../f``, ``runs//etc/f``),
  which a store may hold verbatim, is refused by name before anything is downloaded.
- Reads are bounded in time by throughput (:class:`ReadBound`): an object must arrive at an average of
  at least ``AGENTHOP_S3_MIN_BYTES_PER_S`` once ``AGENTHOP_S3_GRACE_S`` seconds have passed, and
  each listing request must answer within the grace period, so an endpoint that trickles bytes
  fails the command instead of holding it for hours.
- A URL given with credentials in it (``s3://KEY:secret@bucket``) is malformed, and its
  ``user:password@`` part is never shown.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Awaitable
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

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
#: ``scheme://user:password@`` (or ``scheme:user@``): the part of a URL never shown
_USERINFO_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*:(?://)?)[^/]*@")

T = TypeVar("T")


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


def shown_url(text: str) -> str:
    """``text`` as a message may show it: without a ``user:password@`` part, nor the environment's
    credentials and endpoint."""
    return mask(_USERINFO_RE.sub(r"\1***@", text))


def _bad_parts(path: str) -> bool:
    """Whether a ``/``-separated path has a part that is empty, ``.`` or ``..`` (or holds a NUL):
    one that would not name a place inside the folder it is relative to."""
    return any(part in ("", ".", "..") or "\0" in part for part in path.split("/"))


def check_location(text: str, *, remote_ok: bool) -> None:
    """Refuse URL-looking values, except well-formed ``s3://bucket[/prefix]`` when ``remote_ok``."""
    scheme = url_scheme(text)
    if scheme is None:
        return
    shown = shown_url(text)
    local_hint = f"(for a local name that starts with '{scheme}:', write ./{shown})"
    if scheme == "s3" and remote_ok:
        m = _S3_RE.match(text)
        if not m:
            credentials = " (credentials go in AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, never in the URL)" \
                if _USERINFO_RE.match(text) else ""
            raise LocationError(f"{shown!r}: malformed s3 URL, expected s3://bucket/prefix{credentials} {local_hint}")
        prefix = (m.group(2) or "").rstrip("/")
        if prefix and _bad_parts(prefix[1:]):
            raise LocationError(f"{shown!r}: malformed s3 URL: the prefix may not have empty, '.' or '..' "
                                "parts (an object store has no parent folders)")
        return
    where = "s3://bucket/prefix or a local path" if remote_ok else "a local path"
    raise LocationError(f"{shown!r}: {scheme}:// URLs are not supported here; give {where} {local_hint}")


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


# --------------------------------------------------------------------------------------------
# reads bounded by throughput

#: environment variables that override the bound of object reads (docs/running.md#object-storage-s3)
MIN_RATE_ENV = "AGENTHOP_S3_MIN_BYTES_PER_S"
GRACE_ENV = "AGENTHOP_S3_GRACE_S"
DEFAULT_MIN_RATE = 16 * 1024
DEFAULT_GRACE_S = 60.0
_CHUNK = 1 << 16


@dataclass(frozen=True)
class ReadBound:
    """An object read may take ``grace_s`` seconds plus one second per ``min_rate`` bytes it has
    received: after the grace period its average throughput must stay at least ``min_rate`` bytes/s.
    A listing request (at most 1,000 keys) must answer within ``grace_s``."""

    min_rate: float = DEFAULT_MIN_RATE
    grace_s: float = DEFAULT_GRACE_S

    def deadline(self, start: float, received: int) -> float:
        """The monotonic time by which the next byte must have arrived."""
        return start + self.grace_s + received / self.min_rate

    def describe(self) -> str:
        return (f"reads must average at least {self.min_rate:g} bytes/s after the first {self.grace_s:g} s; "
                f"for a slow store raise {GRACE_ENV} or lower {MIN_RATE_ENV}")


def _positive(name: str, default: float) -> float:
    text = os.environ.get(name)
    if text is None or not text.strip():
        return default
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise StorageError(f"{name}={text!r}: expected a positive number")
    return value


def read_bound() -> ReadBound:
    """The bound of the environment (:data:`MIN_RATE_ENV`, :data:`GRACE_ENV`), else the defaults."""
    return ReadBound(_positive(MIN_RATE_ENV, DEFAULT_MIN_RATE), _positive(GRACE_ENV, DEFAULT_GRACE_S))


class _TooSlow(Exception):
    def __init__(self, received: int, seconds: float) -> None:
        super().__init__(f"{received} bytes in {seconds:.0f} s")
        self.received, self.seconds = received, seconds


async def _by(aw: Awaitable[T], deadline: float, start: float, received: int) -> T:
    import asyncio  # here: only object-store reads need it, and it costs every command's start-up 0.02 s

    try:
        return await asyncio.wait_for(aw, max(deadline - time.monotonic(), 0.0))
    except asyncio.TimeoutError:
        raise _TooSlow(received, time.monotonic() - start) from None


def _split(key: str) -> tuple[str, str]:
    bucket, _, path = key.partition("/")
    return bucket, path


async def _list(fs: Any, key: str, bound: ReadBound) -> dict[str, int]:
    """Every object below ``key`` (``bucket/prefix``): key relative to the prefix -> size, each key
    exactly as stored; folder markers (keys ending in ``/``) are left out."""
    bucket, path = _split(key)
    prefix = f"{path}/" if path else ""
    found: dict[str, int] = {}
    token: dict[str, str] = {}
    while True:
        start = time.monotonic()
        page = await _by(fs._call_s3("list_objects_v2", Bucket=bucket, Prefix=prefix, **token),
                         start + bound.grace_s, start, 0)
        for obj in page.get("Contents") or []:
            rel = obj["Key"][len(prefix):]
            if rel and not rel.endswith("/"):
                found[rel] = int(obj.get("Size") or 0)
        if not page.get("IsTruncated") or not page.get("NextContinuationToken"):
            return found
        token = {"ContinuationToken": page["NextContinuationToken"]}


async def _get(fs: Any, key: str, target: Path | None, bound: ReadBound) -> bytes:
    """The object ``key``, written to ``target`` (returns b"") or returned; bounded by ``bound``."""
    bucket, path = _split(key)
    start, received = time.monotonic(), 0
    resp = await _by(fs._call_s3("get_object", Bucket=bucket, Key=path), bound.deadline(start, 0), start, 0)
    body = resp["Body"]
    chunks: list[bytes] = []
    try:
        with open(target, "wb") if target is not None else nullcontext() as fh:
            while True:
                chunk = await _by(body.read(_CHUNK), bound.deadline(start, received), start, received)
                if not chunk:
                    return b"".join(chunks)
                received += len(chunk)
                if fh is None:
                    chunks.append(chunk)
                else:
                    fh.write(chunk)
    finally:
        try:
            body.close()
        except Exception:  # noqa: BLE001 - a body cut off by the bound may refuse to close cleanly
            pass


def _bounded(url: str, action: str, call: Any, *args: Any) -> Any:
    """Run the coroutine function ``call(fs, *args, bound)`` on the filesystem's event loop; a
    read slower than the bound becomes a :class:`StorageError` (client errors are the caller's)."""
    from fsspec.asyn import sync

    bound = read_bound()
    fs = filesystem()
    try:
        return sync(fs.loop, call, fs, *args, bound)
    except _TooSlow as exc:
        raise StorageError(mask(f"{url}: cannot {action} (too slow: {exc}; {bound.describe()})")) from None


def list_files(location: str | Path) -> dict[str, int]:
    """Every file below ``location``: path relative to it -> size in bytes ({} when it is absent)."""
    if not is_remote(location):
        root = Path(location)
        if not root.is_dir():
            return {}
        return {p.relative_to(root).as_posix(): p.stat().st_size for p in root.rglob("*") if p.is_file()}
    url = str(location)
    try:
        return _bounded(url, "list", _list, _key(url))
    except FileNotFoundError:
        return {}
    except StorageError:
        raise
    except Exception as exc:  # noqa: BLE001 - any client failure becomes one clear line
        raise _fail(url, "list", exc) from None


def read_bytes(location: str | Path) -> bytes:
    if not is_remote(location):
        return Path(location).read_bytes()
    try:
        return _bounded(str(location), "read", _get, _key(str(location)), None)
    except StorageError:
        raise
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


def check_keys(url: str, files: list[str]) -> None:
    """Refuse, naming it, the first key below ``url`` that would not be a file inside the folder it
    is copied to (an empty, ``.`` or ``..`` path part: ``x/../../f``, ``/etc/f``)."""
    for rel in files:
        if _bad_parts(rel):
            key = f"{_key(url)}/{rel}".split("/", 1)[1]
            raise StorageError(mask(
                f"{url}: refusing object key {key!r}: it has an empty, '.' or '..' path part, so it would be "
                "written outside the download folder; nothing was downloaded (remove or rename the object)"))


def download_files(url: str, local: Path, files: list[str]) -> None:
    """Copy the files ``files`` (paths relative to ``url``) into ``local``; every key is checked
    (:func:`check_keys`) before the first is downloaded."""
    check_keys(url, files)
    for rel in files:
        target = local / rel
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            _bounded(f"{url}/{rel}", "download", _get, _key(f"{url}/{rel}"), target)
        except StorageError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise _fail(f"{url}/{rel}", "download", exc) from None


def download_file(url: str, local: Path) -> bool:
    """Copy the one object ``url`` names into ``local``; False when there is none."""
    try:
        _bounded(url, "download", _get, _key(url), local)
    except FileNotFoundError:
        return False
    except StorageError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise _fail(url, "download", exc) from None
    return local.is_file()


def upload_file(local: Path, url: str) -> None:
    try:
        filesystem().put_file(str(local), _key(url))  # one PUT per file: atomic under its final name
    except Exception as exc:  # noqa: BLE001
        raise _fail(url, "upload", exc) from None

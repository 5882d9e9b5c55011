"""Where run stores, releases and log folders live: a local path or an ``s3://bucket/prefix`` URL.

One job: name a location, and open / list / write files there, the same way for both kinds. A
string that looks like a URL (``scheme:`` then ``/`` or nothing) is never taken for a local folder:
an unsupported scheme (``gs://``, ``http://``) or a malformed one (``s3:/x``) is an error.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import click

#: ``scheme:`` at the start of an option value, as in ``s3://b/p``, ``s3:/typo`` or ``gs:``
_URL_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]+):(/|$)")


class LocationError(click.BadParameter):
    """An option value that names no usable location (shown by click with the option's name)."""


def url_scheme(text: str) -> str | None:
    """The scheme of ``text`` when it looks like a URL, else None (a plain local path)."""
    m = _URL_RE.match(text)
    return m.group(1).lower() if m else None


def check_not_url(text: str) -> None:
    """Refuse any URL-looking value: this location must be a local path."""
    scheme = url_scheme(text)
    if scheme is None:
        return
    raise LocationError(
        f"{text!r}: {scheme}:// URLs are not supported here; give a local path "
        f"(for a local name that starts with '{scheme}:', write ./{text})"
    )


class LocalPath(click.Path):
    """``click.Path`` that refuses URL-looking values instead of making a folder named ``s3:``."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str):
            try:
                check_not_url(value)
            except LocationError as exc:
                self.fail(exc.message, param, ctx)
        return super().convert(value, param, ctx)

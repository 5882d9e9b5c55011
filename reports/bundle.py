"""The Vega + Vega-Lite + vega-embed JavaScript bundle, inlined once into every report page.

`vl_convert.javascript_bundle()` needs about 1.3 s per process (it runs a bundler), so the result is
cached on disk, keyed by the vl-convert and Vega-Lite versions:
$AGENTHOP_CACHE_DIR, else $XDG_CACHE_HOME/agenthop, else ~/.cache/agenthop. An unwritable cache
directory only costs time.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from functools import lru_cache
from pathlib import Path

import vl_convert as vlc

#: Vega-Lite minor version the specs are written for (altair 6.3 writes v6.4.1 specs).
VL_VERSION = "6.4"


def cache_dir() -> Path:
    if os.environ.get("AGENTHOP_CACHE_DIR"):
        return Path(os.environ["AGENTHOP_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "agenthop"


def _cache_file() -> Path:
    return cache_dir() / f"vega-bundle-vlc{vlc.__version__}-vl{VL_VERSION}.js"


def _safe(js: str) -> str:
    """Make the bundle safe to sit inside <script>...</script> (it contains no '</script' today)."""
    return js.replace("</script", "<\\/script").replace("</SCRIPT", "<\\/SCRIPT")


@lru_cache(maxsize=1)
def javascript_bundle() -> str:
    """The bundle text (defines window.vegaEmbed, window.vega, window.vegaLite)."""
    path = _cache_file()
    try:
        text = path.read_text(encoding="utf-8")
        digest_line, _, body = text.partition("\n")
        if digest_line == "//sha256:" + hashlib.sha256(body.encode()).hexdigest():
            return body
    except OSError:
        pass
    body = _safe(vlc.javascript_bundle(vl_version=VL_VERSION))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".bundle-", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write("//sha256:" + hashlib.sha256(body.encode()).hexdigest() + "\n" + body)
        os.replace(tmp, path)
    except OSError:
        pass
    return body

"""The disk cache of XLA-compiled executables (the xla-cpu and tpu backends): a fresh process
that runs a module an earlier one compiled makes no XLA (and no Mosaic) compile at all.

Where: `<EMBER_CACHE_DIR>/xla/` (the CPU backend's folder, `EMBER_CACHE_DIR`: default
`$XDG_CACHE_HOME/ember` or `~/.cache/ember`; `off`, `0` or empty disables both caches).
Key: SHA-256 of the HLO text XLA is given (Ember's kernels are inside it, as the base64 of
their text), the PJRT platform, its version string and device kind, and jaxlib's
version: a changed module, chip or runtime is another key.
File format (`<key>.xla`): MAGIC, SHA-256 of the body (64 hex), body = the PJRT client's
`serialize_executable` bytes. A file whose checksum does not match is ignored (and
counted in `STATS["rejected"]`); writes go to a temporary file, then `os.replace`. Only
executables this user's own processes wrote are read: the runtime's deserialization runs
code, so the folder must not hold files from others (as JAX's compilation cache).
Where the runtime cannot serialize (an error from `serialize_executable`), nothing is
written and the compile happens again next time.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from typing import Any

from ember import config

MAGIC = b"EMBER-XLA-1\n"
STATS = {"hits": 0, "misses": 0, "writes": 0, "rejected": 0}


def folder() -> str | None:
    """The cache folder, or None when the cache is off (read at each call)."""
    env = config.ember_cache_dir
    if env is not None:
        if env.strip() in ("", "off", "0"):
            return None
        return os.path.join(env, "xla")
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "ember", "xla")


def key(text: str, client: Any, device: Any, jaxlib_version: str) -> str:
    h = hashlib.sha256()
    for part in (text, client.platform, client.platform_version, device.device_kind,
                 jaxlib_version):
        h.update(str(part).encode())
        h.update(b"\0")
    return h.hexdigest()


def load(k: str) -> bytes | None:
    """The serialized executable stored under key `k`, or None."""
    d = folder()
    if d is None:
        return None
    try:
        with open(os.path.join(d, k + ".xla"), "rb") as f:
            data = f.read()
    except OSError:
        STATS["misses"] += 1
        return None
    head = len(MAGIC)
    body = data[head + 64:]
    if data[:head] != MAGIC or data[head:head + 64].decode("ascii", "replace") != \
            hashlib.sha256(body).hexdigest():
        STATS["rejected"] += 1
        return None
    STATS["hits"] += 1
    return body


def store(k: str, body: bytes) -> None:
    """Write `body` under key `k` (atomically; errors writing are ignored: a cache)."""
    d = folder()
    if d is None:
        return
    try:
        os.makedirs(d, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=d, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(MAGIC + hashlib.sha256(body).hexdigest().encode("ascii") + body)
        os.replace(tmp, os.path.join(d, k + ".xla"))
        STATS["writes"] += 1
    except OSError:
        pass

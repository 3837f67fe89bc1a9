"""The on-disk cache of compiled executables: object code plus its RuntimeSpec.

Where: `EMBER_CACHE_DIR` (default `$XDG_CACHE_HOME/ember` or `~/.cache/ember`; `off` or an
empty value disables it). Key: SHA-256 of the canonical HLO text (every constant printed
in full, so every constant's bytes count), the backend options, a hash of Ember's compiler
sources (ember/backends/cpu, ember/passes, ember/hlo), the LLVM version, target triple, CPU
name and features (`llvm_target.Target.key`).

File format (`<key>.o`), all of it covered by the checksum except the checksum itself:
  MAGIC, key (64 hex), SHA-256 of the body (64 hex), body = zlib(meta length (8 bytes LE) +
  JSON meta + constant bytes + object code)
A file that fails any check (magic, key, checksum, decoding) is ignored and counted in
`STATS["disk_rejected"]`, never loaded. Writes go to a temporary file in the same folder,
then `os.replace`, so readers never see half a file.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import tempfile
import zlib
from pathlib import Path
from typing import Any

MAGIC = b"EMBER-CPU-OBJ-1\n"
STATS: dict[str, int] = {"disk_hits": 0, "disk_misses": 0, "disk_writes": 0,
                         "disk_rejected": 0}
_SOURCE_HASH: str | None = None


def cache_dir() -> Path | None:
    env = os.environ.get("EMBER_CACHE_DIR")
    if env is not None:
        return None if env.strip() in ("", "off", "0") else Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ember"


def source_hash() -> str:
    """Hash of the compiler's own sources: a changed pass or emitter invalidates entries."""
    global _SOURCE_HASH
    if _SOURCE_HASH is None:
        root = Path(__file__).resolve().parents[2]  # the ember package
        h = hashlib.sha256()
        for sub in ("backends/cpu", "passes", "hlo"):
            for f in sorted((root / sub).rglob("*.py")):
                h.update(str(f.relative_to(root)).encode())
                h.update(f.read_bytes())
        _SOURCE_HASH = h.hexdigest()
    return _SOURCE_HASH


def make_key(canonical_hlo: str, options: str, target_key: str) -> str:
    h = hashlib.sha256()
    for part in (canonical_hlo, options, source_hash(), target_key):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def load(key: str) -> tuple[dict[str, Any], bytes, bytes] | None:
    """(meta, constant bytes, object code) of a valid entry, or None."""
    d = cache_dir()
    if d is None:
        return None
    try:
        raw = (d / f"{key}.o").read_bytes()
    except OSError:
        STATS["disk_misses"] += 1
        return None
    try:
        head = len(MAGIC)
        if raw[:head] != MAGIC or raw[head:head + 64].decode() != key:
            raise ValueError("foreign file")
        digest = raw[head + 64:head + 128].decode()
        body = raw[head + 128:]
        if hashlib.sha256(body).hexdigest() != digest:
            raise ValueError("checksum mismatch")
        plain = zlib.decompress(body)
        (n,) = struct.unpack("<Q", plain[:8])
        meta = json.loads(plain[8:8 + n])
        nconst = int(meta["const_bytes"])
        consts = plain[8 + n:8 + n + nconst]
        obj = plain[8 + n + nconst:]
        if not obj:
            raise ValueError("no object code")
    except (ValueError, KeyError, UnicodeDecodeError, zlib.error, struct.error,
            json.JSONDecodeError):
        STATS["disk_rejected"] += 1
        return None
    STATS["disk_hits"] += 1
    return meta, consts, obj


def store(key: str, meta: dict[str, Any], consts: bytes, obj: bytes) -> None:
    """Write an entry atomically; failures (read-only folder, full disk) are ignored."""
    d = cache_dir()
    if d is None:
        return
    meta = {**meta, "const_bytes": len(consts)}
    m = json.dumps(meta).encode()
    body = zlib.compress(struct.pack("<Q", len(m)) + m + consts + obj, 1)
    data = MAGIC + key.encode() + hashlib.sha256(body).hexdigest().encode() + body
    try:
        d.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=d, prefix=f".{key[:16]}-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, d / f"{key}.o")
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        return
    STATS["disk_writes"] += 1

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

The source hash is what a warm process would otherwise pay most for (reading and hashing
~100 files, ~8 ms): `source_hash()` first hashes the cheap stat list (path, size,
mtime_ns) of those files and looks it up in `<cache>/sources.hash`, a one-line memo
`<stat digest> <content digest>`; only a mismatch reads and hashes the contents (and
rewrites the memo). Any edit changes a file's size or mtime, so it still changes the key
(the rule Python's own bytecode cache relies on). With the cache off, keys need no source
hash at all (nothing outlives the process). Hashing uses the `_sha256` extension when
present: `hashlib` loads OpenSSL on import (~3 ms of a warm first call).
"""

from __future__ import annotations

import json
import os
import struct
import zlib
from pathlib import Path
from typing import Any

try:  # SHA-256 without importing hashlib (which loads OpenSSL: ~3 ms); same digests
    from _sha256 import sha256  # CPython <= 3.11
except ImportError:  # pragma: no cover - depends on the interpreter
    try:
        from _sha2 import sha256  # CPython >= 3.12
    except ImportError:
        from hashlib import sha256

MAGIC = b"EMBER-CPU-OBJ-1\n"
STATS: dict[str, int] = {"disk_hits": 0, "disk_misses": 0, "disk_writes": 0,
                         "disk_rejected": 0}
_SOURCE_HASH: str | None = None
SOURCE_DIRS = ("backends/cpu", "passes", "hlo")  # under the ember package
MEMO_NAME = "sources.hash"


def cache_dir() -> Path | None:
    env = os.environ.get("EMBER_CACHE_DIR")
    if env is not None:
        return None if env.strip() in ("", "off", "0") else Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ember"


def source_hash() -> str:
    """Hash of the compiler's own sources: a changed pass or emitter invalidates entries.
    Once per process; through the stat-keyed memo when the disk cache is on."""
    global _SOURCE_HASH
    if _SOURCE_HASH is None:
        pkg = Path(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
        _SOURCE_HASH = sources_digest(pkg, cache_dir())  # (abspath: no symlink walk)
    return _SOURCE_HASH


def sources_digest(root: Path, memo_dir: Path | None) -> str:
    """SHA-256 of the relative path and bytes of every compiler source under `root` (the
    ember package), found through `memo_dir`'s memo when the sources' stat list matches it
    (`memo_dir` None: no memo, read everything)."""
    files = source_files(root)
    stat_key = _digest("\n".join(f"{rel}\0{size}\0{mtime}" for rel, _, size, mtime in files))
    found = _read_memo(memo_dir, stat_key) if memo_dir is not None else None
    if found is None:
        h = sha256()
        for rel, path, _, _ in files:
            h.update(rel.encode())
            with open(path, "rb") as f:
                h.update(f.read())
        found = h.hexdigest()
        if memo_dir is not None:
            _atomic_write(memo_dir, MEMO_NAME, f"{stat_key} {found}\n".encode())
    return found


def source_files(root: Path) -> list[tuple[str, str, int, int]]:
    """(path relative to `root` with '/', absolute path, size, mtime_ns) of every .py file
    of the compiler folders, sorted by relative path; __pycache__ is skipped. os.scandir,
    whose entries stat without resolving the path again: this walk runs in every process
    that consults the cache (~0.5 ms for ~100 files)."""
    out: list[tuple[str, str, int, int]] = []

    def walk(folder: str, rel: str) -> None:
        with os.scandir(folder) as it:
            for e in it:
                name = e.name
                if name.endswith(".py") and e.is_file():
                    st = e.stat()
                    out.append((f"{rel}/{name}", e.path, st.st_size, st.st_mtime_ns))
                elif name != "__pycache__" and e.is_dir(follow_symlinks=False):
                    walk(e.path, f"{rel}/{name}")

    for sub in SOURCE_DIRS:
        walk(str(root / sub), sub)
    out.sort()
    return out


def _digest(text: str) -> str:
    return sha256(text.encode()).hexdigest()


def _read_memo(d: Path, stat_key: str) -> str | None:
    """The content digest the memo holds for `stat_key`, or None (absent, stale, garbled)."""
    try:
        with open(d / MEMO_NAME, "rb") as f:
            parts = f.read().decode("utf-8", "replace").split()
    except OSError:
        return None
    if len(parts) != 2 or parts[0] != stat_key or not _is_digest(parts[1]):
        return None
    return parts[1]


def _is_digest(s: str) -> bool:
    return len(s) == 64 and all(c in "0123456789abcdef" for c in s)


def make_key(canonical_hlo: str, options: str, target_key: str) -> str:
    """The entry name of a compiled object. With the disk cache off the key only has to be
    unique within this process, where the sources cannot change: no source hash then."""
    h = sha256()
    src = source_hash() if cache_dir() is not None else "no-disk-cache"
    for part in (canonical_hlo, options, src, target_key):
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
        if sha256(body).hexdigest() != digest:
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
    data = MAGIC + key.encode() + sha256(body).hexdigest().encode() + body
    if _atomic_write(d, f"{key}.o", data):
        STATS["disk_writes"] += 1


def _atomic_write(d: Path, name: str, data: bytes) -> bool:
    """`d/name` = data through a temporary file and a rename (readers see the old file or
    the new one, never half of one); False if the folder cannot be written."""
    import tempfile  # only writers need it

    try:
        d.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=d, prefix=f".{name[:16]}-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, d / name)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        return False
    return True

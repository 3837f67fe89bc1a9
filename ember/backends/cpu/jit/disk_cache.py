"""The on-disk cache of compiled executables: object code plus its RuntimeSpec.

Where: `EMBER_CACHE_DIR` (default `$XDG_CACHE_HOME/ember` or `~/.cache/ember`; `off` or an
empty value disables it). Key: SHA-256 of the canonical HLO text (every constant printed
in full, so every constant's bytes count), the backend options, a hash of Ember's compiler
sources (ember/backends/cpu, ember/codegen, ember/passes, ember/hlo), the LLVM version,
target triple, CPU name and features (`llvm_target.Target.key`).

File format (`<key>.o`), all of it covered by the checksum except the checksum itself:
  MAGIC, key (64 hex), SHA-256 of the body (64 hex), body = length of A (8 bytes LE) + A + B
  A = zlib(meta length (8 bytes LE) + JSON meta + constant bytes + object code)
  B = zlib(JSON texts): the entry's large texts (the CPU compiler's LLVM IR), which a warm
      process rarely looks at: `load_lazy` decompresses and decodes them on first use only
      (they are most of an entry: ~21 of 25 KB for `a * sin(x) + b`); `load` decodes them
      at once
A file that fails any check (magic, key, checksum, decoding) is ignored and counted in
`STATS["disk_rejected"]`, never loaded. Writes go to a temporary file in the same folder,
then `os.replace`, so readers never see half a file.

The source hash is what a warm process would otherwise pay most for (reading and hashing
~100 files, ~8 ms): `source_hash()` first hashes the cheap stat list (path, size,
mtime_ns) of those files and looks it up in `<cache>/sources.hash`, a one-line memo
`<stat digest> <content digest>`; only a mismatch reads and hashes the contents (and
rewrites the memo). Any edit changes a file's size or mtime, so it still changes the key
(the rule Python's own bytecode cache relies on). With the cache off, keys need no source
hash at all (nothing outlives the process; the jit's compile makes no key then, `enabled()`).
Hashing uses the `_sha256` extension when present, loaded on first use: `hashlib` loads
OpenSSL on import (~3 ms of a warm first call). The hit path
works on `str` paths (pathlib objects cost ~10 us each to build; a hit would make ten).
"""

from __future__ import annotations

import json
import os
import struct
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ember.backends.cpu.jit.object_format import foreign_reason
from ember.config import config

_SHA256: Any = None


def sha256(data: bytes = b"") -> Any:
    """A SHA-256 hash object, without importing hashlib (which loads OpenSSL: ~3 ms); same
    digests. The extension loads on first use: with the cache off, nothing is hashed."""
    global _SHA256
    if _SHA256 is None:
        try:
            from _sha256 import sha256 as ctor  # CPython <= 3.11
        except ImportError:  # pragma: no cover - depends on the interpreter
            try:
                from _sha2 import sha256 as ctor  # CPython >= 3.12
            except ImportError:
                from hashlib import sha256 as ctor
        _SHA256 = ctor
    return _SHA256(data)

MAGIC = b"EMBER-CPU-OBJ-2\n"  # (-1: no text section)
STATS: dict[str, int] = {"disk_hits": 0, "disk_misses": 0, "disk_writes": 0,
                         "disk_rejected": 0}
_SOURCE_HASH: str | None = None
SOURCE_DIRS = ("backends/cpu", "codegen", "passes", "hlo")  # under the ember package
MEMO_NAME = "sources.hash"


def enabled() -> bool:
    """Whether a disk cache is in use (EMBER_CACHE_DIR is not "off", "0" or empty)."""
    return _cache_path() is not None


def cache_dir() -> Path | None:
    d = _cache_path()
    return None if d is None else Path(d)


def _cache_path() -> str | None:
    """`cache_dir()` as a string (read from the environment at each call: tests and users
    may change it between compilations)."""
    env = config.ember_cache_dir
    if env is not None:
        return None if env.strip() in ("", "off", "0") else env
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "ember")


def source_hash() -> str:
    """Hash of the compiler's own sources: a changed pass or emitter invalidates entries.
    Once per process; through the stat-keyed memo when the disk cache is on."""
    global _SOURCE_HASH
    if _SOURCE_HASH is None:
        here = os.path.abspath(__file__)  # (abspath: no symlink walk)
        # the ember package: four levels above ember/backends/cpu/jit/disk_cache.py
        pkg = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(here))))
        _SOURCE_HASH = sources_digest(pkg, _cache_path())
    return _SOURCE_HASH


def sources_digest(root: str | os.PathLike, memo_dir: str | os.PathLike | None) -> str:
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


def source_files(root: str | os.PathLike) -> list[tuple[str, str, int, int]]:
    """(path relative to `root` with '/', absolute path, size, mtime_ns) of every .py file
    of the compiler folders, sorted by relative path; __pycache__ is skipped. os.scandir,
    whose entries know their type without a stat: this walk runs in every process that
    consults the cache (~0.5 ms for ~100 files, mostly the stat calls), so it is a plain
    loop over a folder stack."""
    out: list[tuple[str, str, int, int]] = []
    root = os.fspath(root)
    stack = [(os.path.join(root, sub), sub) for sub in SOURCE_DIRS]
    while stack:
        folder, rel = stack.pop()
        with os.scandir(folder) as it:
            for e in it:
                name = e.name
                if name.endswith(".py") and e.is_file():
                    st = e.stat()
                    out.append((rel + "/" + name, e.path, st.st_size, st.st_mtime_ns))
                elif name != "__pycache__" and e.is_dir(follow_symlinks=False):
                    stack.append((e.path, rel + "/" + name))
    out.sort()
    return out


def _digest(text: str) -> str:
    return sha256(text.encode()).hexdigest()


def _read_memo(d: str | os.PathLike, stat_key: str) -> str | None:
    """The content digest the memo holds for `stat_key`, or None (absent, stale, garbled)."""
    try:
        with open(os.path.join(d, MEMO_NAME), "rb") as f:
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
    src = source_hash() if _cache_path() is not None else "no-disk-cache"
    for part in (canonical_hlo, options, src, target_key):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


class Entry:
    """A loaded entry: `texts()` decodes the text section on its first call (then keeps
    it; {} when the entry stored none). A plain class: a NamedTuple costs ~0.25 ms to
    define, a third of this module's import on a warm cache's first call."""

    __slots__ = ("meta", "consts", "obj", "texts")

    def __init__(self, meta: dict[str, Any], consts: bytes, obj: bytes,
                 texts: Callable[[], dict[str, str]]) -> None:
        self.meta, self.consts, self.obj, self.texts = meta, consts, obj, texts


def load(key: str) -> tuple[dict[str, Any], bytes, bytes] | None:
    """(meta, constant bytes, object code) of a valid entry, or None; the stored texts
    are merged into meta (decoded now: see `load_lazy` to defer them)."""
    entry = load_lazy(key)
    if entry is None:
        return None
    try:
        texts = entry.texts()
    except ValueError:  # (corrupt despite the checksum: a writer's bug)
        STATS["disk_hits"] -= 1
        STATS["disk_rejected"] += 1
        return None
    return {**entry.meta, **texts}, entry.consts, entry.obj


def load_lazy(key: str) -> Entry | None:
    """The entry of `key` if its file is valid (checksum, key, format), texts not yet
    decoded; else None."""
    d = _cache_path()
    if d is None:
        return None
    try:
        with open(os.path.join(d, key + ".o"), "rb") as f:
            raw = f.read()
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
        (na,) = struct.unpack("<Q", body[:8])
        if 8 + na > len(body):
            raise ValueError("truncated body")
        plain = zlib.decompress(body[8:8 + na])
        (n,) = struct.unpack("<Q", plain[:8])
        meta = json.loads(plain[8:8 + n])
        nconst = int(meta["const_bytes"])
        consts = plain[8 + n:8 + n + nconst]
        obj = plain[8 + n + nconst:]
        if not obj:
            raise ValueError("no object code")
    except (ValueError, KeyError, TypeError, UnicodeDecodeError, zlib.error, struct.error):
        STATS["disk_rejected"] += 1
        return None
    STATS["disk_hits"] += 1
    return Entry(meta, consts, obj, _deferred_texts(body[8 + na:]))


def _deferred_texts(packed: bytes) -> Callable[[], dict[str, str]]:
    """texts() -> the JSON object `packed` (zlib) holds, decoded once; ValueError if the
    section does not decode to an object of strings (the checksum already held)."""
    done: list[dict[str, str]] = []

    def texts() -> dict[str, str]:
        if not done:
            try:
                value = json.loads(zlib.decompress(packed)) if packed else {}
            except (zlib.error, UnicodeDecodeError) as e:
                raise ValueError(f"cache entry texts do not decode: {e}") from None
            if not isinstance(value, dict) or not all(
                    isinstance(v, str) for v in value.values()):
                raise ValueError("cache entry texts are not an object of strings")
            done.append(value)
        return done[0]

    return texts


def cached_object(text: str, options: str, target_key: str, meta: dict[str, Any],
                  build: Callable[[], bytes]) -> bytes:
    """Object code keyed by (`text`, `options`, the target): the cache's entry when it has
    a valid one, else `build()`'s, stored with `meta` (libraries that name their callees
    by symbol only: the BLAS adapter, the GEMM library, the thread pool). With the cache off,
    `build()`'s, with nothing hashed."""
    if not enabled():
        return build()
    key = make_key(text, options, target_key)
    hit = load(key)
    if hit is not None:
        if foreign_reason(hit[2]) is None:
            return hit[2]
        STATS["disk_hits"] -= 1  # (never link another machine's code: build it again)
        STATS["disk_rejected"] += 1
    obj = build()
    store(key, meta, b"", obj)
    return obj


def store(key: str, meta: dict[str, Any], consts: bytes, obj: bytes,
          texts: dict[str, str] | None = None) -> None:
    """Write an entry atomically; failures (read-only folder, full disk) are ignored.
    `texts`: large strings a loader rarely needs, kept in a section decoded on demand."""
    d = _cache_path()
    if d is None:
        return
    meta = {**meta, "const_bytes": len(consts)}
    m = json.dumps(meta).encode()
    part_a = zlib.compress(struct.pack("<Q", len(m)) + m + consts + obj, 1)
    part_b = zlib.compress(json.dumps(texts).encode(), 1) if texts else b""
    body = struct.pack("<Q", len(part_a)) + part_a + part_b
    data = MAGIC + key.encode() + sha256(body).hexdigest().encode() + body
    if _atomic_write(d, f"{key}.o", data):
        STATS["disk_writes"] += 1


def _atomic_write(d: str | os.PathLike, name: str, data: bytes) -> bool:
    """`d/name` = data through a temporary file and a rename (readers see the old file or
    the new one, never half of one); False if the folder cannot be written."""
    import tempfile  # only writers need it

    try:
        os.makedirs(d, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=d, prefix=f".{name[:16]}-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, os.path.join(d, name))
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        return False
    return True

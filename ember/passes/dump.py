"""`EMBER_DUMP_TO=dir`: file names for everything the compiler writes there.

Input: the environment variable (read at each call) and, while a module compiles, a dump
session opened by `ember.compiler.compile_jaxpr`. Output: files in `dir`.
- Inside a session (every jit compilation): one set of files per compiled module,
  `SSSS.<module>.NNNN.<stage>.<ext>`, where SSSS numbers the compilations (continuing after
  the largest number already in `dir`, so a second run never overwrites the first) and NNNN
  numbers the files of the set in the order they were written, so `ls` lists each set in
  pipeline order: `.jaxpr.txt`, `before_optimizations.hlo.txt`, one `<pipeline>.<pass>
  .hlo.txt` per pass run, `after_optimizations.hlo.txt`, `.ll` (LLVM IR before and after
  LLVM's optimizations), `.s` (assembly).
- Outside a session (a PassPipeline run directly): `NNNN.<module>.<pipeline>.<pass>.hlo.txt`
  after each pass, NNNN counting the dumps of that module name.
Invariants: names hold only `[A-Za-z0-9_.()-]` (anything else becomes `_`); a session
belongs to the context that opened it (a ContextVar), so concurrent compilations on other
threads write their own sets.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextvars import ContextVar

from ember.config import config

_UNSAFE = re.compile(r"[^A-Za-z0-9_.()-]")
_LOCK = threading.Lock()
_NEXT_SET: dict[str, int] = {}  # directory -> next compilation number
_LOOSE_COUNTERS: dict[str, int] = defaultdict(int)  # module name -> dumps outside sessions


def dump_dir() -> str | None:
    return config.ember_dump_to


def _safe(name: str) -> str:
    return _UNSAFE.sub("_", name)


class DumpSession:
    """The files of one compiled module: `write(stage, ext, text)` names them in order."""

    def __init__(self, directory: str, module: str, number: int) -> None:
        self.directory = directory
        self.module = module
        self.number = number
        self.step = 0
        self.paths: list[str] = []

    def write(self, stage: str, ext: str, text: str) -> str:
        name = f"{self.number:04d}.{_safe(self.module)}.{self.step:04d}.{_safe(stage)}.{ext}"
        self.step += 1
        path = os.path.join(self.directory, name)
        with open(path, "w") as f:
            f.write(text)
        self.paths.append(path)
        return path


_SESSION: ContextVar[DumpSession | None] = ContextVar("ember_dump_session", default=None)


def _next_number(directory: str) -> int:
    with _LOCK:
        if directory not in _NEXT_SET:
            taken = [int(n[:4]) for n in os.listdir(directory) if re.match(r"\d{4}\.", n)]
            _NEXT_SET[directory] = max(taken, default=-1) + 1
        n = _NEXT_SET[directory]
        _NEXT_SET[directory] = n + 1
        return n


@contextlib.contextmanager
def dump_session(module: str) -> Iterator[DumpSession | None]:
    """Open the file set of one compilation (None when EMBER_DUMP_TO is unset)."""
    directory = dump_dir()
    if directory is None:
        yield None
        return
    os.makedirs(directory, exist_ok=True)
    session = DumpSession(directory, module, _next_number(directory))
    token = _SESSION.set(session)
    try:
        yield session
    finally:
        _SESSION.reset(token)


def current_session() -> DumpSession | None:
    return _SESSION.get()


def dump_pass(module_name: str, pipeline: str, pass_name: str,
              text_fn: Callable[[], str]) -> None:
    """The dump after one pass: into the open session, else as a loose file. `text_fn()`
    prints the module (called only when something is written)."""
    directory = dump_dir()
    if directory is None:
        return
    session = _SESSION.get()
    if session is not None and session.directory == directory:
        session.write(f"{pipeline}.{pass_name}", "hlo.txt", text_fn())
        return
    os.makedirs(directory, exist_ok=True)
    with _LOCK:
        n = _LOOSE_COUNTERS[module_name]
        _LOOSE_COUNTERS[module_name] += 1
    path = os.path.join(directory, f"{n:04d}.{_safe(module_name)}.{_safe(pipeline)}."
                                   f"{_safe(pass_name)}.hlo.txt")
    with open(path, "w") as f:
        f.write(text_fn())

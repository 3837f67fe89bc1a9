"""Plain records: what `@dataclass` gives a class, without building it at import.

Input: a class that lists its field names in `FIELDS` and sets them in its own `__init__`.
Output, by inheriting:
  FrozenRecord  equality (same class, equal fields), hash and repr over FIELDS; assigning or
                deleting an attribute raises FrozenInstanceError (as `frozen=True`);
  Record        equality and repr over FIELDS, unhashable (as a mutable dataclass with eq).
Why: the `@dataclass` decorator generates and execs code when its module is imported, about
half a millisecond a class; records on the compile path (schedule, buffer assignment,
fusion decisions, rewrites) made every first compile pay for it (issue 4).
Invariant: repr is `Name(field=value!r, ...)` in FIELDS order, as a dataclass prints.
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError


class Record:
    """Mutable: equality and repr over `FIELDS`; unhashable."""

    FIELDS: tuple[str, ...] = ()
    __hash__ = None  # type: ignore[assignment]

    def _values(self) -> tuple:
        # (a list, not a generator: records are hashed by the thousand)
        return tuple([getattr(self, f) for f in self.FIELDS])

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self._values() == other._values()  # type: ignore[attr-defined]
        return NotImplemented

    def __repr__(self) -> str:
        inner = ", ".join(f"{f}={getattr(self, f)!r}" for f in self.FIELDS)
        return f"{type(self).__name__}({inner})"


class FrozenRecord(Record):
    """Immutable: `Record` plus a hash over `FIELDS`; `_freeze(*values)` sets the fields
    (in FIELDS order) once, from `__init__`."""

    def _freeze(self, *values: object) -> None:
        fields = self.FIELDS
        if len(values) != len(fields):
            raise ValueError(f"{type(self).__name__} takes {len(fields)} fields, "
                             f"not {len(values)}")
        # (the instance dict written directly: object.__setattr__ per field was a tenth
        # of the fusion pass, which records a decision for every refused producer)
        self.__dict__.update(zip(fields, values))

    def __hash__(self) -> int:  # type: ignore[override]
        # (computed once: slots and buffers key the schedule's dicts by the thousand; the
        # value stays out of pickles, whose process may hash strings differently)
        d = self.__dict__
        h = d.get("_hash")
        if h is None:
            h = d["_hash"] = hash(self._values())
        return h

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_hash", None)
        return state

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")


__all__ = ["FrozenRecord", "Record"]

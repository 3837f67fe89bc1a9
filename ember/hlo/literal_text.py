"""Text form of HLO literals (constant values), shared by the printer and the parser.

Input: a NumPy array (printing) or the text between `constant(` and `)` (parsing).
Output: XLA-style text (`1`, `{1, 2, 3}`, `{{1, 2}, {3, 4}}`, `true`, `nan`, `-inf`, `-0`)
or the array back; a complex element prints as XLA does, `(re, im)`. Invariant:
parse(format(x)) is bit-identical to x. Floats print the shortest digit string that
round-trips in their own type (at most 9 significant digits for f32 and 17 for f64); NaNs
other than the default quiet NaN print as `nan(0x<payload>)`, with a leading `-` when the
sign bit is set.
"""

from __future__ import annotations

import re

import numpy as np

ELIDE_OVER = 8  # display mode prints arrays with more elements than this as {...}
_SCALAR_TEXT: dict[tuple[np.dtype, bytes], str] = {}  # format_literal's scalars by bits


def _mantissa_bits(dt: np.dtype) -> int:
    if _is_bf16(dt):
        return 7
    return {2: 10, 4: 23, 8: 52}[dt.itemsize]


def _is_bf16(dt: np.dtype) -> bool:
    """bfloat16 (ml_dtypes'), known by name: NumPy gives it kind 'V', not 'f'."""
    return dt.name == "bfloat16"


def format_float(v: np.floating) -> str:
    dt = np.asarray(v).dtype
    if np.isnan(v):
        ut = np.dtype(f"u{dt.itemsize}")
        bits = int(np.asarray(v).view(ut))
        m = _mantissa_bits(dt)
        payload = bits & ((1 << m) - 1)
        sign = "-" if bits >> (8 * dt.itemsize - 1) else ""
        return f"{sign}nan" if payload == 1 << (m - 1) else f"{sign}nan(0x{payload:x})"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    if _is_bf16(dt):  # (NumPy formats no bf16: its f32 value, exact, prints the same number)
        v = np.float32(v)
    s = np.format_float_positional(v, unique=True, trim="-")
    if len(s) > 16:
        s = np.format_float_scientific(v, unique=True, trim="-")
    return s


def format_scalar(v: np.generic) -> str:
    if isinstance(v, np.bool_):
        return "true" if v else "false"
    if isinstance(v, np.floating) or _is_bf16(v.dtype):
        return format_float(v)
    if isinstance(v, np.complexfloating):
        return f"({format_float(v.real)}, {format_float(v.imag)})"
    return str(int(v))


def format_literal(value: np.ndarray, elide: bool = False) -> str:
    """The literal text; with `elide`, arrays of more than ELIDE_OVER elements are `{...}`."""
    value = np.asarray(value)
    if value.ndim == 0:
        # (a scalar's text kept by its bits: every reduction's init value and every
        # scalar constant of a long program prints through NumPy's float formatting)
        key = (value.dtype, value.tobytes())
        text = _SCALAR_TEXT.get(key)
        if text is None:
            if len(_SCALAR_TEXT) >= 4096:
                _SCALAR_TEXT.clear()
            text = _SCALAR_TEXT[key] = format_scalar(value[()])
        return text
    if elide and value.size > ELIDE_OVER:
        return "{...}"
    if value.size == 0:
        return "{}"

    def rec(a: np.ndarray) -> str:
        if a.ndim == 1:
            return "{" + ", ".join(format_scalar(x) for x in a) + "}"
        return "{" + ", ".join(rec(sub) for sub in a) + "}"

    return rec(value)


_PART = r"\s*(-?[^,()\s]+(?:\(0x[0-9a-fA-F]+\))?)\s*"
_COMPLEX_PAIR = re.compile(r"\(" + _PART + "," + _PART + r"\)")
_NAN = re.compile(r"^(-?)nan(?:\(0x([0-9a-fA-F]+)\))?$")


def parse_float(token: str, dt: np.dtype) -> np.generic:
    m = _NAN.match(token)
    if not m:
        return dt.type(token)
    nbits = 8 * dt.itemsize
    mb = _mantissa_bits(dt)
    ebits = nbits - 1 - mb
    payload = int(m.group(2), 16) if m.group(2) else 1 << (mb - 1)
    bits = (((1 << ebits) - 1) << mb) | payload
    if m.group(1):
        bits |= 1 << (nbits - 1)
    return np.array(bits, dtype=f"u{dt.itemsize}").view(dt)[()]


def parse_literal(text: str, dt: np.dtype, dims: tuple[int, ...]) -> np.ndarray:
    text = text.strip()
    if text == "{...}" or "..." in text:
        raise ValueError("an elided constant ({...}) cannot be parsed; print in parsable mode")
    tokens = [t for t in re.split(r"[{},\s]+", text) if t]
    if dt == np.bool_:
        vals = [t == "true" for t in tokens]
        arr = np.array(vals, dtype=dt)
    elif dt.kind == "f" or _is_bf16(dt):
        arr = np.array([parse_float(t, dt) for t in tokens], dtype=dt)
    elif dt.kind == "c":
        # (re, im) pairs; a part may be nan(0x<payload>), whose parentheses stay
        part = np.empty((), dt).real.dtype
        pairs = _COMPLEX_PAIR.findall(text)
        flat = np.array([parse_float(t, part) for pair in pairs for t in pair], dtype=part)
        arr = np.empty(len(pairs), dt)
        arr.real, arr.imag = flat[0::2], flat[1::2]
    else:
        arr = np.array([int(t) for t in tokens], dtype=dt)
    count = int(np.prod(dims, dtype=np.int64))
    if arr.size != count:
        raise ValueError(f"literal has {arr.size} elements, shape needs {count}")
    return arr.reshape(dims)

"""Jaxprs of control flow (cond, switch, while_loop, fori_loop, scan, map) against the text
JAX 0.10.2 prints for the same functions (recorded by running JAX; JAX is not needed here).

Covers nested `{ lambda ; ... }` bodies and their param order, consts closed over by bodies
(hoisted to operands, once each), weak-typed carries, `_` for unused top-level outputs,
forwarded outputs, carries moved to consts, shared `let` jaxprs (big bodies, a function used
twice), and the legacy cond operand forms.
"""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.numpy as jnp
from ember import lax

_DTYPES = {"f32": np.float32, "i32": np.int32, "bool": np.bool_}

CASES = [
    ('cond_literal_out',
     'def f(p):\n'
     '  return lax.cond(p, lambda: 1.0, lambda: 2.0)',
     [('bool', [])],
     '{ lambda ; a:bool[]. let\n'
     '    b:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a\n'
     '    c:f32[] = cond[\n'
     '      branches=(\n'
     '        { lambda ; . let  in (2.0:f32[],) }\n'
     '        { lambda ; . let  in (1.0:f32[],) }\n'
     '      )\n'
     '    ] b\n'
     '  in (c,) }'),
    ('cond_mixed_weak',
     'def f(p):\n'
     '  return lax.cond(p, lambda: jnp.float32(2), lambda: 1.0)',
     [('bool', [])],
     '{ lambda ; a:bool[]. let\n'
     '    b:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a\n'
     '    c:f32[] = cond[\n'
     '      branches=(\n'
     '        { lambda ; . let  in (1.0:f32[],) }\n'
     '        { lambda ; . let  in (2.0:f32[],) }\n'
     '      )\n'
     '    ] b\n'
     '  in (c,) }'),
    ('cond_forward',
     'def f(p, x, y):\n'
     '  return lax.cond(p, lambda a, b: (a, b * 2), lambda a, b: (a, b + 1), x, y)',
     [('bool', []), ('f32', [3]), ('f32', [3])],
     '{ lambda ; a:bool[] b:f32[3] c:f32[3]. let\n'
     '    d:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a\n'
     '    e:f32[3] = cond[\n'
     '      branches=(\n'
     '        { lambda ; f:f32[3] g:f32[3]. let h:f32[3] = add g 1.0:f32[] in (h,) }\n'
     '        { lambda ; i:f32[3] j:f32[3]. let k:f32[3] = mul j 2.0:f32[] in (k,) }\n'
     '      )\n'
     '    ] d b c\n'
     '  in (b, e) }'),
    ('cond_int_pred',
     'def f(n, x):\n'
     '  return lax.cond(n, jnp.sin, jnp.cos, x)',
     [('i32', []), ('f32', [3])],
     '{ lambda ; a:i32[] b:f32[3]. let\n'
     '    c:bool[] = ne a 0:i32[]\n'
     '    d:i32[] = convert_element_type[new_dtype=int32 weak_type=False] c\n'
     '    e:f32[3] = cond[\n'
     '      branches=(\n'
     '        { lambda ; f:f32[3]. let g:f32[3] = cos f in (g,) }\n'
     '        { lambda ; h:f32[3]. let i:f32[3] = sin h in (i,) }\n'
     '      )\n'
     '    ] d b\n'
     '  in (e,) }'),
    ('cond_pytree',
     'def f(p, x):\n'
     "  return lax.cond(p, lambda d: {'a': d['a'] + 1, 'b': d['b']}, lambda d: {'a': d['a'] * 2, "
     "'b': -d['b']}, {'a': x, 'b': x})",
     [('bool', []), ('f32', [3])],
     '{ lambda ; a:bool[] b:f32[3]. let\n'
     '    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a\n'
     '    d:f32[3] e:f32[3] = cond[\n'
     '      branches=(\n'
     '        { lambda ; f:f32[3] g:f32[3]. let\n'
     '            h:f32[3] = mul f 2.0:f32[]\n'
     '            i:f32[3] = neg g\n'
     '          in (h, i) }\n'
     '        { lambda ; j:f32[3] k:f32[3]. let l:f32[3] = add j 1.0:f32[] in (l, k) }\n'
     '      )\n'
     '    ] c b b\n'
     '  in (d, e) }'),
    ('cond_nested',
     'def f(p, x):\n'
     '  return lax.cond(p, lambda x: lax.cond(x[0] > 0, jnp.sin, jnp.cos, x), lambda x: x, x)',
     [('bool', []), ('f32', [3])],
     '{ lambda ; a:bool[] b:f32[3]. let\n'
     '    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a\n'
     '    d:f32[3] = cond[\n'
     '      branches=(\n'
     '        { lambda ; e:f32[3]. let  in (e,) }\n'
     '        { lambda ; f:f32[3]. let\n'
     '            g:f32[1] = slice[limit_indices=(1,) start_indices=(0,) strides=None] f\n'
     '            h:f32[] = squeeze[dimensions=(0,)] g\n'
     '            i:bool[] = gt h 0.0:f32[]\n'
     '            j:i32[] = convert_element_type[new_dtype=int32 weak_type=False] i\n'
     '            k:f32[3] = cond[\n'
     '              branches=(\n'
     '                { lambda ; l:f32[3]. let m:f32[3] = cos l in (m,) }\n'
     '                { lambda ; n:f32[3]. let o:f32[3] = sin n in (o,) }\n'
     '              )\n'
     '            ] j f\n'
     '          in (k,) }\n'
     '      )\n'
     '    ] c b\n'
     '  in (d,) }'),
    ('while_big_body',
     'def f(x):\n'
     '  def body(c):\n'
     '    i, v = c\n'
     '    for _ in range(6):\n'
     '      v = jnp.sin(v) * 2.0\n'
     '    return i + 1, v\n'
     '  return lax.while_loop(lambda c: c[0] < 5, body, (0, x))',
     [('f32', [3])],
     'let jaxpr = { lambda ; a:i32[] b:f32[3]. let\n'
     '    c:f32[3] = sin b\n'
     '    d:f32[3] = mul c 2.0:f32[]\n'
     '    e:f32[3] = sin d\n'
     '    f:f32[3] = mul e 2.0:f32[]\n'
     '    g:f32[3] = sin f\n'
     '    h:f32[3] = mul g 2.0:f32[]\n'
     '    i:f32[3] = sin h\n'
     '    j:f32[3] = mul i 2.0:f32[]\n'
     '    k:f32[3] = sin j\n'
     '    l:f32[3] = mul k 2.0:f32[]\n'
     '    m:f32[3] = sin l\n'
     '    n:f32[3] = mul m 2.0:f32[]\n'
     '    o:i32[] = add a 1:i32[]\n'
     '  in (o, n) } in\n'
     '{ lambda ; p:f32[3]. let\n'
     '    q:i32[] r:f32[3] = while[\n'
     '      body_jaxpr=jaxpr\n'
     '      body_nconsts=0\n'
     '      cond_jaxpr={ lambda ; s:i32[] t:f32[3]. let\n'
     '          u:bool[] = lt s 5:i32[]\n'
     '        in (u,) }\n'
     '      cond_nconsts=0\n'
     '    ] 0:i32[] p\n'
     '  in (q, r) }'),
    ('while_passthrough',
     'def f(x, y):\n'
     '  return lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1], c[2] * c[1]), (0, y,'
     ' x))',
     [('f32', [3]), ('f32', [3])],
     '{ lambda ; a:f32[3] b:f32[3]. let\n'
     '    c:i32[] d:f32[3] = while[\n'
     '      body_jaxpr={ lambda ; e:f32[3] f:i32[] g:f32[3]. let\n'
     '          h:i32[] = add f 1:i32[]\n'
     '          i:f32[3] = mul g e\n'
     '        in (h, i) }\n'
     '      body_nconsts=1\n'
     '      cond_jaxpr={ lambda ; j:i32[] k:f32[3]. let\n'
     '          l:bool[] = lt j 5:i32[]\n'
     '        in (l,) }\n'
     '      cond_nconsts=0\n'
     '    ] b 0:i32[] a\n'
     '  in (c, b, d) }'),
    ('fori_traced_strong',
     'def f(n, x):\n'
     '  return lax.fori_loop(jnp.int32(0), n, lambda i, c: c * 2.0, x)',
     [('i32', []), ('f32', [3])],
     '{ lambda ; a:i32[] b:f32[3]. let\n'
     '    _:i32[] _:i32[] c:f32[3] = while[\n'
     '      body_jaxpr={ lambda ; d:i32[] e:i32[] f:f32[3]. let\n'
     '          g:i32[] = add d 1:i32[]\n'
     '          h:f32[3] = mul f 2.0:f32[]\n'
     '        in (g, e, h) }\n'
     '      body_nconsts=0\n'
     '      cond_jaxpr={ lambda ; i:i32[] j:i32[] k:f32[3]. let\n'
     '          l:bool[] = lt i j\n'
     '        in (l,) }\n'
     '      cond_nconsts=0\n'
     '    ] 0:i32[] a b\n'
     '  in (c,) }'),
    ('fori_closure',
     'def f(x, w):\n'
     '  return lax.fori_loop(0, 4, lambda i, c: c * w + i, x)',
     [('f32', [3]), ('f32', [3])],
     '{ lambda ; a:f32[3] b:f32[3]. let\n'
     '    _:i32[] c:f32[3] = scan[\n'
     '      jaxpr={ lambda ; d:f32[3] e:i32[] f:f32[3]. let\n'
     '          g:i32[] = add e 1:i32[]\n'
     '          h:f32[3] = mul f d\n'
     '          i:f32[] = convert_element_type[new_dtype=float32 weak_type=False] e\n'
     '          j:f32[3] = add h i\n'
     '        in (g, j) }\n'
     '      length=4\n'
     '      num_carry=2\n'
     '      num_consts=1\n'
     '      reverse=False\n'
     '      unroll=1\n'
     '    ] b 0:i32[] a\n'
     '  in (c,) }'),
    ('scan_passthrough',
     'def f(x, xs):\n'
     '  return lax.scan(lambda c, a: ((c[0], c[1] + a * c[0]), a), (x, x), xs)',
     [('f32', [3]), ('f32', [4, 3])],
     '{ lambda ; a:f32[3] b:f32[4,3]. let\n'
     '    c:f32[3] = scan[\n'
     '      jaxpr={ lambda ; d:f32[3] e:f32[3] f:f32[3]. let\n'
     '          g:f32[3] = mul f d\n'
     '          h:f32[3] = add e g\n'
     '        in (h,) }\n'
     '      length=4\n'
     '      num_carry=1\n'
     '      num_consts=1\n'
     '      reverse=False\n'
     '      unroll=1\n'
     '    ] a a b\n'
     '  in (a, c, b) }'),
    ('scan_reverse_unroll',
     'def f(x, xs):\n'
     '  return lax.scan(lambda c, a: (c * a, c + a), x, xs, reverse=True, unroll=3)',
     [('f32', [3]), ('f32', [4, 3])],
     '{ lambda ; a:f32[3] b:f32[4,3]. let\n'
     '    c:f32[3] d:f32[4,3] = scan[\n'
     '      jaxpr={ lambda ; e:f32[3] f:f32[3]. let\n'
     '          g:f32[3] = mul e f\n'
     '          h:f32[3] = add e f\n'
     '        in (g, h) }\n'
     '      length=4\n'
     '      num_carry=1\n'
     '      num_consts=0\n'
     '      reverse=True\n'
     '      unroll=3\n'
     '    ] a b\n'
     '  in (c, d) }'),
    ('scan_none_length',
     'def f(x):\n'
     '  return lax.scan(lambda c, _: (c + 1.0, c * 2.0), x, None, length=5)',
     [('f32', [3])],
     '{ lambda ; a:f32[3]. let\n'
     '    b:f32[3] c:f32[5,3] = scan[\n'
     '      jaxpr={ lambda ; d:f32[3]. let\n'
     '          e:f32[3] = add d 1.0:f32[]\n'
     '          f:f32[3] = mul d 2.0:f32[]\n'
     '        in (e, f) }\n'
     '      length=5\n'
     '      num_carry=1\n'
     '      num_consts=0\n'
     '      reverse=False\n'
     '      unroll=1\n'
     '    ] a\n'
     '  in (b, c) }'),
    ('scan_pytree_xs',
     'def f(x, xs):\n'
     "  return lax.scan(lambda c, a: (c + a['u'] * a['v'], (a['u'], c)), x, {'u': xs, 'v': xs * 2"
     "})",
     [('f32', [3]), ('f32', [4, 3])],
     '{ lambda ; a:f32[3] b:f32[4,3]. let\n'
     '    c:f32[4,3] = mul b 2.0:f32[]\n'
     '    d:f32[3] e:f32[4,3] = scan[\n'
     '      jaxpr={ lambda ; f:f32[3] g:f32[3] h:f32[3]. let\n'
     '          i:f32[3] = mul g h\n'
     '          j:f32[3] = add f i\n'
     '        in (j, f) }\n'
     '      length=4\n'
     '      num_carry=1\n'
     '      num_consts=0\n'
     '      reverse=False\n'
     '      unroll=1\n'
     '    ] a b c\n'
     '  in (d, b, e) }'),
    ('map_simple',
     'def f(xs):\n'
     '  return lax.map(lambda r: jnp.sum(r * r), xs)',
     [('f32', [4, 3])],
     '{ lambda ; a:f32[4,3]. let\n'
     '    b:f32[4] = scan[\n'
     '      jaxpr={ lambda ; c:f32[3]. let\n'
     '          d:f32[3] = mul c c\n'
     '          e:f32[] = reduce_sum[axes=(0,) out_sharding=None] d\n'
     '        in (e,) }\n'
     '      length=4\n'
     '      num_carry=0\n'
     '      num_consts=0\n'
     '      reverse=False\n'
     '      unroll=1\n'
     '    ] a\n'
     '  in (b,) }'),
    ('switch_consts',
     'def f(i, x, y):\n'
     '  return lax.switch(i, [lambda a: a + y, lambda a: a * y, lambda a: a - 1.0], x)',
     [('i32', []), ('f32', [3]), ('f32', [3])],
     '{ lambda ; a:i32[] b:f32[3] c:f32[3]. let\n'
     '    d:i32[] = clamp 0:i32[] a 2:i32[]\n'
     '    e:f32[3] = cond[\n'
     '      branches=(\n'
     '        { lambda ; f:f32[3] g:f32[3]. let h:f32[3] = add g f in (h,) }\n'
     '        { lambda ; i:f32[3] j:f32[3]. let k:f32[3] = mul j i in (k,) }\n'
     '        { lambda ; l:f32[3] m:f32[3]. let n:f32[3] = sub m 1.0:f32[] in (n,) }\n'
     '      )\n'
     '    ] d c b\n'
     '  in (e,) }'),
    ('scan_unroll_true',
     'def f(x):\n'
     '  return lax.scan(lambda c, _: (c * 2.0, None), x, None, length=3, unroll=True)',
     [('f32', [3])],
     '{ lambda ; a:f32[3]. let\n'
     '    b:f32[3] = scan[\n'
     '      jaxpr={ lambda ; c:f32[3]. let d:f32[3] = mul c 2.0:f32[] in (d,) }\n'
     '      length=3\n'
     '      num_carry=1\n'
     '      num_consts=0\n'
     '      reverse=False\n'
     '      unroll=3\n'
     '    ] a\n'
     '  in (b,) }'),
    ('while_unused_dce',
     'def f(x):\n'
     '  def body(c):\n'
     '    i, v = c\n'
     '    return i + 1, v * 2.0\n'
     '  def cnd(c):\n'
     '    w = jnp.sin(c[1])\n'
     '    return c[0] < 3\n'
     '  return lax.while_loop(cnd, body, (0, x))',
     [('f32', [3])],
     '{ lambda ; a:f32[3]. let\n'
     '    b:i32[] c:f32[3] = while[\n'
     '      body_jaxpr={ lambda ; d:i32[] e:f32[3]. let\n'
     '          f:i32[] = add d 1:i32[]\n'
     '          g:f32[3] = mul e 2.0:f32[]\n'
     '        in (f, g) }\n'
     '      body_nconsts=0\n'
     '      cond_jaxpr={ lambda ; h:i32[] i:f32[3]. let\n'
     '          j:f32[3] = sin i\n'
     '          k:bool[] = lt h 3:i32[]\n'
     '        in (k,) }\n'
     '      cond_nconsts=0\n'
     '    ] 0:i32[] a\n'
     '  in (b, c) }'),
    ('while_cond_dead_with_move',
     'def f(x, y):\n'
     '  def cnd(c):\n'
     '    w = jnp.sin(c[2])\n'
     '    return c[0] < 3\n'
     '  return lax.while_loop(cnd, lambda c: (c[0] + 1, c[1], c[2] * c[1]), (0, y, x))',
     [('f32', [3]), ('f32', [3])],
     '{ lambda ; a:f32[3] b:f32[3]. let\n'
     '    c:i32[] d:f32[3] = while[\n'
     '      body_jaxpr={ lambda ; e:f32[3] f:i32[] g:f32[3]. let\n'
     '          h:i32[] = add f 1:i32[]\n'
     '          i:f32[3] = mul g e\n'
     '        in (h, i) }\n'
     '      body_nconsts=1\n'
     '      cond_jaxpr={ lambda ; j:i32[] k:f32[3]. let\n'
     '          l:bool[] = lt j 3:i32[]\n'
     '        in (l,) }\n'
     '      cond_nconsts=0\n'
     '    ] b 0:i32[] a\n'
     '  in (c, b, d) }'),
    ('fori_scan_big',
     'def f(x):\n'
     '  def body(i, v):\n'
     '    for _ in range(5):\n'
     '      v = jnp.cos(v) + 1.0\n'
     '    return v\n'
     '  return lax.fori_loop(0, 10, body, x)',
     [('f32', [3])],
     'let jaxpr = { lambda ; a:i32[] b:f32[3]. let\n'
     '    c:i32[] = add a 1:i32[]\n'
     '    d:f32[3] = cos b\n'
     '    e:f32[3] = add d 1.0:f32[]\n'
     '    f:f32[3] = cos e\n'
     '    g:f32[3] = add f 1.0:f32[]\n'
     '    h:f32[3] = cos g\n'
     '    i:f32[3] = add h 1.0:f32[]\n'
     '    j:f32[3] = cos i\n'
     '    k:f32[3] = add j 1.0:f32[]\n'
     '    l:f32[3] = cos k\n'
     '    m:f32[3] = add l 1.0:f32[]\n'
     '  in (c, m) } in\n'
     '{ lambda ; n:f32[3]. let\n'
     '    _:i32[] o:f32[3] = scan[\n'
     '      jaxpr=jaxpr\n'
     '      length=10\n'
     '      num_carry=2\n'
     '      num_consts=0\n'
     '      reverse=False\n'
     '      unroll=1\n'
     '    ] 0:i32[] n\n'
     '  in (o,) }'),
    ('cond_basic',
     'def f(p, x):\n'
     '  return lax.cond(p, lambda x: x + 1.0, lambda x: x * 2.0, x)',
     [('bool', []), ('f32', [3])],
     '{ lambda ; a:bool[] b:f32[3]. let\n'
     '    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a\n'
     '    d:f32[3] = cond[\n'
     '      branches=(\n'
     '        { lambda ; e:f32[3]. let f:f32[3] = mul e 2.0:f32[] in (f,) }\n'
     '        { lambda ; g:f32[3]. let h:f32[3] = add g 1.0:f32[] in (h,) }\n'
     '      )\n'
     '    ] c b\n'
     '  in (d,) }'),
    ('cond_float_pred',
     'def f(p, x):\n'
     '  return lax.cond(p > 0, jnp.sin, lambda x: x * 2.0, x)',
     [('f32', []), ('f32', [3])],
     '{ lambda ; a:f32[] b:f32[3]. let\n'
     '    c:bool[] = gt a 0.0:f32[]\n'
     '    d:i32[] = convert_element_type[new_dtype=int32 weak_type=False] c\n'
     '    e:f32[3] = cond[\n'
     '      branches=(\n'
     '        { lambda ; f:f32[3]. let g:f32[3] = mul f 2.0:f32[] in (g,) }\n'
     '        { lambda ; h:f32[3]. let i:f32[3] = sin h in (i,) }\n'
     '      )\n'
     '    ] d b\n'
     '  in (e,) }'),
    ('cond_closure',
     'def f(p, x, y):\n'
     '  return lax.cond(p, lambda x: x + y, lambda x: x * np.arange(3, dtype=np.float32), x)',
     [('bool', []), ('f32', [3]), ('f32', [])],
     '{ lambda a:f32[3]; b:bool[] c:f32[3] d:f32[]. let\n'
     '    e:i32[] = convert_element_type[new_dtype=int32 weak_type=False] b\n'
     '    f:f32[3] = cond[\n'
     '      branches=(\n'
     '        { lambda ; g:f32[] h:f32[3] i:f32[3]. let j:f32[3] = mul i h in (j,) }\n'
     '        { lambda ; k:f32[] l:f32[3] m:f32[3]. let n:f32[3] = add m k in (n,) }\n'
     '      )\n'
     '    ] e d a c\n'
     '  in (f,) }'),
    ('cond_legacy',
     'def f(p, x):\n'
     '  return lax.cond(p, x, lambda a: a + 1.0, x * 2.0, lambda b: b - 1.0)',
     [('bool', []), ('f32', [3])],
     '{ lambda ; a:bool[] b:f32[3]. let\n'
     '    c:f32[3] = mul b 2.0:f32[]\n'
     '    d:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a\n'
     '    e:f32[3] = cond[\n'
     '      branches=(\n'
     '        { lambda ; f:f32[3] g:f32[3]. let h:f32[3] = sub g 1.0:f32[] in (h,) }\n'
     '        { lambda ; i:f32[3] j:f32[3]. let k:f32[3] = add i 1.0:f32[] in (k,) }\n'
     '      )\n'
     '    ] d b c\n'
     '  in (e,) }'),
    ('cond_operand_kw',
     'def f(p, x):\n'
     '  return lax.cond(p, jnp.sin, jnp.cos, operand=x)',
     [('bool', []), ('f32', [3])],
     '{ lambda ; a:bool[] b:f32[3]. let\n'
     '    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a\n'
     '    d:f32[3] = cond[\n'
     '      branches=(\n'
     '        { lambda ; e:f32[3]. let f:f32[3] = cos e in (f,) }\n'
     '        { lambda ; g:f32[3]. let h:f32[3] = sin g in (h,) }\n'
     '      )\n'
     '    ] c b\n'
     '  in (d,) }'),
    ('switch_basic',
     'def f(i, x):\n'
     '  return lax.switch(i, [lambda x: x + 1.0, lambda x: x * 2.0, jnp.cos], x)',
     [('i32', []), ('f32', [3])],
     '{ lambda ; a:i32[] b:f32[3]. let\n'
     '    c:i32[] = clamp 0:i32[] a 2:i32[]\n'
     '    d:f32[3] = cond[\n'
     '      branches=(\n'
     '        { lambda ; e:f32[3]. let f:f32[3] = add e 1.0:f32[] in (f,) }\n'
     '        { lambda ; g:f32[3]. let h:f32[3] = mul g 2.0:f32[] in (h,) }\n'
     '        { lambda ; i:f32[3]. let j:f32[3] = cos i in (j,) }\n'
     '      )\n'
     '    ] c b\n'
     '  in (d,) }'),
    ('switch_same_fn',
     'def f(i, x):\n'
     '  g = lambda x: x * 2.0\n'
     '  return lax.switch(i, [g, g, jnp.sin], x)',
     [('i32', []), ('f32', [])],
     'let jaxpr = { lambda ; a:f32[]. let b:f32[] = mul a 2.0:f32[] in (b,) } in\n'
     '{ lambda ; c:i32[] d:f32[]. let\n'
     '    e:i32[] = clamp 0:i32[] c 2:i32[]\n'
     '    f:f32[] = cond[\n'
     '      branches=(jaxpr jaxpr { lambda ; g:f32[]. let h:f32[] = sin g in (h,) })\n'
     '    ] e d\n'
     '  in (f,) }'),
    ('while_basic',
     'def f(x):\n'
     '  return lax.while_loop(lambda c: c[0] < 10, lambda c: (c[0] + 1, c[1] * 2.0), (0, x))',
     [('f32', [3])],
     '{ lambda ; a:f32[3]. let\n'
     '    b:i32[] c:f32[3] = while[\n'
     '      body_jaxpr={ lambda ; d:i32[] e:f32[3]. let\n'
     '          f:i32[] = add d 1:i32[]\n'
     '          g:f32[3] = mul e 2.0:f32[]\n'
     '        in (f, g) }\n'
     '      body_nconsts=0\n'
     '      cond_jaxpr={ lambda ; h:i32[] i:f32[3]. let\n'
     '          j:bool[] = lt h 10:i32[]\n'
     '        in (j,) }\n'
     '      cond_nconsts=0\n'
     '    ] 0:i32[] a\n'
     '  in (b, c) }'),
    ('while_closure',
     'def f(x, y):\n'
     '  w = np.arange(3, dtype=np.float32)\n'
     '  return lax.while_loop(lambda c: c[0] < y, lambda c: (c[0] + 1.0, c[1] * w + y), (0.0, x))',
     [('f32', [3]), ('f32', [])],
     '{ lambda a:f32[3]; b:f32[3] c:f32[]. let\n'
     '    d:f32[] e:f32[3] = while[\n'
     '      body_jaxpr={ lambda ; f:f32[3] g:f32[] h:f32[] i:f32[3]. let\n'
     '          j:f32[] = add h 1.0:f32[]\n'
     '          k:f32[3] = mul i f\n'
     '          l:f32[3] = add k g\n'
     '        in (j, l) }\n'
     '      body_nconsts=2\n'
     '      cond_jaxpr={ lambda ; m:f32[] n:f32[] o:f32[3]. let\n'
     '          p:f32[] = convert_element_type[new_dtype=float32 weak_type=False] n\n'
     '          q:bool[] = lt p m\n'
     '        in (q,) }\n'
     '      cond_nconsts=1\n'
     '    ] c a c 0.0:f32[] b\n'
     '  in (d, e) }'),
    ('while_drop_counter',
     'def f(x):\n'
     '  _, b = lax.while_loop(lambda c: c[0] < 10, lambda c: (c[0] + 1, c[1] * 2.0), (0, x))\n'
     '  return b',
     [('f32', [])],
     '{ lambda ; a:f32[]. let\n'
     '    _:i32[] b:f32[] = while[\n'
     '      body_jaxpr={ lambda ; c:i32[] d:f32[]. let\n'
     '          e:i32[] = add c 1:i32[]\n'
     '          f:f32[] = mul d 2.0:f32[]\n'
     '        in (e, f) }\n'
     '      body_nconsts=0\n'
     '      cond_jaxpr={ lambda ; g:i32[] h:f32[]. let\n'
     '          i:bool[] = lt g 10:i32[]\n'
     '        in (i,) }\n'
     '      cond_nconsts=0\n'
     '    ] 0:i32[] a\n'
     '  in (b,) }'),
    ('fori_static',
     'def f(x):\n'
     '  return lax.fori_loop(0, 10, lambda i, c: c * 2.0 + i, x)',
     [('f32', [3])],
     '{ lambda ; a:f32[3]. let\n'
     '    _:i32[] b:f32[3] = scan[\n'
     '      jaxpr={ lambda ; c:i32[] d:f32[3]. let\n'
     '          e:i32[] = add c 1:i32[]\n'
     '          f:f32[3] = mul d 2.0:f32[]\n'
     '          g:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c\n'
     '          h:f32[3] = add f g\n'
     '        in (e, h) }\n'
     '      length=10\n'
     '      num_carry=2\n'
     '      num_consts=0\n'
     '      reverse=False\n'
     '      unroll=1\n'
     '    ] 0:i32[] a\n'
     '  in (b,) }'),
    ('fori_traced',
     'def f(n, x):\n'
     '  return lax.fori_loop(0, n, lambda i, c: c * 2.0 + i, x)',
     [('i32', []), ('f32', [3])],
     '{ lambda ; a:i32[] b:f32[3]. let\n'
     '    _:i32[] _:i32[] c:f32[3] = while[\n'
     '      body_jaxpr={ lambda ; d:i32[] e:i32[] f:f32[3]. let\n'
     '          g:i32[] = add d 1:i32[]\n'
     '          h:f32[3] = mul f 2.0:f32[]\n'
     '          i:f32[] = convert_element_type[new_dtype=float32 weak_type=False] d\n'
     '          j:f32[3] = add h i\n'
     '        in (g, e, j) }\n'
     '      body_nconsts=0\n'
     '      cond_jaxpr={ lambda ; k:i32[] l:i32[] m:f32[3]. let\n'
     '          n:bool[] = lt k l\n'
     '        in (n,) }\n'
     '      cond_nconsts=0\n'
     '    ] 0:i32[] a b\n'
     '  in (c,) }'),
    ('scan_basic',
     'def f(x, xs):\n'
     '  return lax.scan(lambda c, a: (c + a, c * a), x, xs)',
     [('f32', [3]), ('f32', [4, 3])],
     '{ lambda ; a:f32[3] b:f32[4,3]. let\n'
     '    c:f32[3] d:f32[4,3] = scan[\n'
     '      jaxpr={ lambda ; e:f32[3] f:f32[3]. let\n'
     '          g:f32[3] = add e f\n'
     '          h:f32[3] = mul e f\n'
     '        in (g, h) }\n'
     '      length=4\n'
     '      num_carry=1\n'
     '      num_consts=0\n'
     '      reverse=False\n'
     '      unroll=1\n'
     '    ] a b\n'
     '  in (c, d) }'),
    ('scan_closure',
     'def f(x, y, xs):\n'
     '  w = np.arange(3, dtype=np.float32)\n'
     '  return lax.scan(lambda c, a: (c * y + a * w, c.sum()), x, xs)',
     [('f32', [3]), ('f32', []), ('f32', [5, 3])],
     '{ lambda a:f32[3]; b:f32[3] c:f32[] d:f32[5,3]. let\n'
     '    e:f32[3] f:f32[5] = scan[\n'
     '      jaxpr={ lambda ; g:f32[] h:f32[3] i:f32[3] j:f32[3]. let\n'
     '          k:f32[3] = mul i g\n'
     '          l:f32[3] = mul j h\n'
     '          m:f32[3] = add k l\n'
     '          n:f32[] = reduce_sum[axes=(0,) out_sharding=None] i\n'
     '        in (m, n) }\n'
     '      length=5\n'
     '      num_carry=1\n'
     '      num_consts=2\n'
     '      reverse=False\n'
     '      unroll=1\n'
     '    ] c a b d\n'
     '  in (e, f) }'),
    ('scan_reverse_unroll2',
     'def f(x):\n'
     '  return lax.scan(lambda c, _: (c + 1, c), x, None, length=4, reverse=True, unroll=2)',
     [('f32', [3])],
     '{ lambda ; a:f32[3]. let\n'
     '    b:f32[3] c:f32[4,3] = scan[\n'
     '      jaxpr={ lambda ; d:f32[3]. let e:f32[3] = add d 1.0:f32[] in (e, d) }\n'
     '      length=4\n'
     '      num_carry=1\n'
     '      num_consts=0\n'
     '      reverse=True\n'
     '      unroll=2\n'
     '    ] a\n'
     '  in (b, c) }'),
    ('map_sin',
     'def f(xs):\n'
     '  return lax.map(jnp.sin, xs)',
     [('f32', [4, 3])],
     '{ lambda ; a:f32[4,3]. let\n'
     '    b:f32[4,3] = scan[\n'
     '      jaxpr={ lambda ; c:f32[3]. let d:f32[3] = sin c in (d,) }\n'
     '      length=4\n'
     '      num_carry=0\n'
     '      num_consts=0\n'
     '      reverse=False\n'
     '      unroll=1\n'
     '    ] a\n'
     '  in (b,) }'),
]


@pytest.mark.parametrize("name, source, args, expected", CASES, ids=[c[0] for c in CASES])
def test_jaxpr_matches_jax(name, source, args, expected):
    env = {"jax": ember, "jnp": jnp, "lax": lax, "np": np}
    exec(source, env)
    vals = [np.zeros(tuple(shape), _DTYPES[dtype]) for dtype, shape in args]
    assert str(ember.make_jaxpr(env["f"])(*vals)) == expected


def test_every_primitive_is_covered():
    names = " ".join(c[3] for c in CASES)
    for prim in ("cond[", "while[", "scan["):
        assert prim in names

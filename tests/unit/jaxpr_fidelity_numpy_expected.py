# ruff: noqa: W291  (JAX prints a trailing space after an equation with no operands)
"""JAX 0.10.2's own make_jaxpr text for the jnp functions whose jaxprs Ember matches.

Generated once from JAX 0.10.2 (the venv's reference copy) by running the programs in
test_jaxpr_fidelity_numpy.py with `import jax, jax.numpy as jnp`; tests must not need JAX.
"""

EXPECTED: dict[str, str] = {}

EXPECTED['main'] = """\
let _piecewise = { lambda ; a:f32[5] b:bool[2,5]. let
    c:bool[1,5] = slice[limit_indices=(1, 5) start_indices=(0, 0) strides=None] b
    d:bool[1,5] = broadcast_in_dim False:bool[]
    e:bool[3,5] = concatenate[dimension=0] d b
    f:i32[3,5] = jit[
      name=cumsum
      jaxpr={ lambda ; e:bool[3,5]. let
          g:i32[3,5] = convert_element_type[new_dtype=int32 weak_type=False] e
          f:i32[3,5] = cumsum[axis=0 reverse=False] g
        in (f,) }
    ] e
    h:i32[5] = argmax[axes=(0,) index_dtype=int32] f
    i:i32[5] = clamp 0:i32[] h 2:i32[]
    j:bool[5] = eq i 0:i32[]
    k:f32[5] = stop_gradient a
    l:f32[5] = select_n j k a
    m:f32[5] = add l 1.0:f32[]
    n:bool[5] = eq i 1:i32[]
    o:f32[5] = stop_gradient a
    p:f32[5] = select_n n o a
    q:f32[5] = neg p
    r:bool[5] = eq i 2:i32[]
    s:f32[5] = stop_gradient a
    t:f32[5] = select_n r s a
    u:f32[5] = mul t 2.0:f32[]
    v:f32[5] = select_n i m q u
  in (v,) } in
{ lambda ; w:f32[5]. let
    x:bool[5] = lt w 0.0:f32[]
    y:bool[5] = gt w 1.0:f32[]
    z:bool[1,5] = broadcast_in_dim[broadcast_dimensions=(1,)] x
    ba:bool[1,5] = broadcast_in_dim[broadcast_dimensions=(1,)] y
    bb:bool[2,5] = concatenate[dimension=0] z ba
    bc:f32[5] = jit[name=_piecewise jaxpr=_piecewise] w bb
  in (bc,) }"""

EXPECTED['const'] = """\
let _piecewise = { lambda ; a:f32[5] b:bool[2,5] c:f32[] d:i32[]. let
    e:bool[1,5] = slice[limit_indices=(1, 5) start_indices=(0, 0) strides=None] b
    f:bool[1,5] = broadcast_in_dim False:bool[]
    g:bool[3,5] = concatenate[dimension=0] f b
    h:i32[3,5] = jit[
      name=cumsum
      jaxpr={ lambda ; g:bool[3,5]. let
          i:i32[3,5] = convert_element_type[new_dtype=int32 weak_type=False] g
          h:i32[3,5] = cumsum[axis=0 reverse=False] i
        in (h,) }
    ] g
    j:i32[5] = argmax[axes=(0,) index_dtype=int32] h
    k:i32[5] = clamp 0:i32[] j 2:i32[]
    l:f32[5] = broadcast_in_dim c
    m:i32[5] = broadcast_in_dim d
    n:bool[5] = eq k 0:i32[]
    o:f32[5] = stop_gradient l
    p:f32[5] = select_n n o l
    q:i32[5] = stop_gradient m
    r:i32[5] = select_n n q m
    s:f32[5] = stop_gradient a
    t:f32[5] = select_n n s a
    u:f32[5] = copy p
    v:f32[5] = convert_element_type[new_dtype=float32 weak_type=False] u
    w:bool[5] = eq k 1:i32[]
    x:f32[5] = stop_gradient l
    y:f32[5] = select_n w x l
    z:i32[5] = stop_gradient m
    ba:i32[5] = select_n w z m
    bb:f32[5] = stop_gradient a
    bc:f32[5] = select_n w bb a
    bd:i32[5] = copy ba
    be:f32[5] = convert_element_type[new_dtype=float32 weak_type=False] bd
    bf:bool[5] = eq k 2:i32[]
    bg:f32[5] = stop_gradient l
    bh:f32[5] = select_n bf bg l
    bi:i32[5] = stop_gradient m
    bj:i32[5] = select_n bf bi m
    bk:f32[5] = stop_gradient a
    bl:f32[5] = select_n bf bk a
    bm:f32[5] = mul bl 2.0:f32[]
    bn:f32[5] = select_n k v be bm
  in (bn,) } in
{ lambda ; bo:f32[5]. let
    bp:bool[5] = lt bo 0.0:f32[]
    bq:bool[5] = gt bo 1.0:f32[]
    br:bool[1,5] = broadcast_in_dim[broadcast_dimensions=(1,)] bp
    bs:bool[1,5] = broadcast_in_dim[broadcast_dimensions=(1,)] bq
    bt:bool[2,5] = concatenate[dimension=0] br bs
    bu:f32[5] = jit[name=_piecewise jaxpr=_piecewise] bo bt 1.5:f32[] 3:i32[]
  in (bu,) }"""

EXPECTED['nodef'] = """\
let _piecewise = { lambda ; a:f32[5] b:bool[2,5] c:i32[]. let
    d:bool[1,5] = slice[limit_indices=(1, 5) start_indices=(0, 0) strides=None] b
    e:bool[1,5] = broadcast_in_dim False:bool[]
    f:bool[3,5] = concatenate[dimension=0] e b
    g:i32[3,5] = jit[
      name=cumsum
      jaxpr={ lambda ; f:bool[3,5]. let
          h:i32[3,5] = convert_element_type[new_dtype=int32 weak_type=False] f
          g:i32[3,5] = cumsum[axis=0 reverse=False] h
        in (g,) }
    ] f
    i:i32[5] = argmax[axes=(0,) index_dtype=int32] g
    j:i32[5] = clamp 0:i32[] i 2:i32[]
    k:i32[5] = broadcast_in_dim c
    l:bool[5] = eq j 0:i32[]
    m:i32[5] = stop_gradient k
    n:i32[5] = select_n l m k
    o:f32[5] = stop_gradient a
    p:f32[5] = select_n l o a
    q:i32[5] = copy n
    r:f32[5] = convert_element_type[new_dtype=float32 weak_type=False] q
    s:bool[5] = eq j 1:i32[]
    t:i32[5] = stop_gradient k
    u:i32[5] = select_n s t k
    v:f32[5] = stop_gradient a
    w:f32[5] = select_n s v a
    x:f32[5] = neg w
    y:bool[5] = eq j 2:i32[]
    z:i32[5] = stop_gradient k
    ba:i32[5] = select_n y z k
    bb:f32[5] = stop_gradient a
    bc:f32[5] = select_n y bb a
    bd:f32[5] = mul bc 2.0:f32[]
    be:f32[5] = select_n j r x bd
  in (be,) } in
{ lambda ; bf:f32[5]. let
    bg:bool[5] = lt bf 0.0:f32[]
    bh:bool[5] = gt bf 1.0:f32[]
    bi:bool[1,5] = broadcast_in_dim[broadcast_dimensions=(1,)] bg
    bj:bool[1,5] = broadcast_in_dim[broadcast_dimensions=(1,)] bh
    bk:bool[2,5] = concatenate[dimension=0] bi bj
    bl:f32[5] = jit[name=_piecewise jaxpr=_piecewise] bf bk 0:i32[]
  in (bl,) }"""

EXPECTED['scalar'] = """\
{ lambda ; a:f32[]. let
    b:bool[] = lt a 0.0:f32[]
    c:bool[] = gt a 1.0:f32[]
    d:bool[1] = broadcast_in_dim b
    e:bool[1] = broadcast_in_dim c
    f:bool[2] = concatenate[dimension=0] d e
    g:f32[] = jit[
      name=_piecewise
      jaxpr={ lambda ; a:f32[] f:bool[2]. let
          h:bool[1] = slice[limit_indices=(1,) start_indices=(0,) strides=None] f
          i:bool[1] = broadcast_in_dim False:bool[]
          j:bool[3] = concatenate[dimension=0] i f
          k:i32[3] = jit[
            name=cumsum
            jaxpr={ lambda ; j:bool[3]. let
                l:i32[3] = convert_element_type[new_dtype=int32 weak_type=False] j
                k:i32[3] = cumsum[axis=0 reverse=False] l
              in (k,) }
          ] j
          m:i32[] = argmax[axes=(0,) index_dtype=int32] k
          n:i32[] = clamp 0:i32[] m 2:i32[]
          g:f32[] = cond[
            branches=(
              { lambda ; o:f32[]. let p:f32[] = add o 1.0:f32[] in (p,) }
              { lambda ; q:f32[]. let r:f32[] = neg q in (r,) }
              { lambda ; s:f32[]. let t:f32[] = mul s 2.0:f32[] in (t,) }
            )
          ] n a
        in (g,) }
    ] a f
  in (g,) }"""

EXPECTED['args'] = """\
let _piecewise = { lambda ; a:f32[5] b:bool[2,5] c:f32[] d:f32[]. let
    e:bool[1,5] = slice[limit_indices=(1, 5) start_indices=(0, 0) strides=None] b
    f:bool[1,5] = broadcast_in_dim False:bool[]
    g:bool[3,5] = concatenate[dimension=0] f b
    h:i32[3,5] = jit[
      name=cumsum
      jaxpr={ lambda ; g:bool[3,5]. let
          i:i32[3,5] = convert_element_type[new_dtype=int32 weak_type=False] g
          h:i32[3,5] = cumsum[axis=0 reverse=False] i
        in (h,) }
    ] g
    j:i32[5] = argmax[axes=(0,) index_dtype=int32] h
    k:i32[5] = clamp 0:i32[] j 2:i32[]
    l:f32[5] = broadcast_in_dim c
    m:f32[5] = broadcast_in_dim d
    n:bool[5] = eq k 0:i32[]
    o:f32[5] = stop_gradient l
    p:f32[5] = select_n n o l
    q:f32[5] = stop_gradient m
    r:f32[5] = select_n n q m
    s:f32[5] = stop_gradient a
    t:f32[5] = select_n n s a
    u:f32[5] = add t p
    v:bool[5] = eq k 1:i32[]
    w:f32[5] = stop_gradient l
    x:f32[5] = select_n v w l
    y:f32[5] = stop_gradient m
    z:f32[5] = select_n v y m
    ba:f32[5] = stop_gradient a
    bb:f32[5] = select_n v ba a
    bc:f32[5] = neg bb
    bd:f32[5] = mul bc x
    be:f32[5] = convert_element_type[new_dtype=float32 weak_type=False] z
    bf:f32[5] = add bd be
    bg:bool[5] = eq k 2:i32[]
    bh:f32[5] = stop_gradient l
    bi:f32[5] = select_n bg bh l
    bj:f32[5] = stop_gradient m
    bk:f32[5] = select_n bg bj m
    bl:f32[5] = stop_gradient a
    bm:f32[5] = select_n bg bl a
    bn:f32[5] = mul bm 2.0:f32[]
    bo:f32[5] = select_n k u bf bn
  in (bo,) } in
{ lambda ; bp:f32[5] bq:f32[]. let
    br:bool[5] = lt bp 0.0:f32[]
    bs:bool[5] = gt bp 1.0:f32[]
    bt:bool[1,5] = broadcast_in_dim[broadcast_dimensions=(1,)] br
    bu:bool[1,5] = broadcast_in_dim[broadcast_dimensions=(1,)] bs
    bv:bool[2,5] = concatenate[dimension=0] bt bu
    bw:f32[5] = jit[name=_piecewise jaxpr=_piecewise] bp bv bq 2.0:f32[]
  in (bw,) }"""

EXPECTED['2d'] = """\
let _piecewise = { lambda ; a:f32[2,3] b:bool[2,2,3] c:i32[]. let
    d:bool[1,2,3] = slice[
      limit_indices=(1, 2, 3)
      start_indices=(0, 0, 0)
      strides=None
    ] b
    e:bool[1,2,3] = broadcast_in_dim False:bool[]
    f:bool[3,2,3] = concatenate[dimension=0] e b
    g:i32[3,2,3] = jit[
      name=cumsum
      jaxpr={ lambda ; f:bool[3,2,3]. let
          h:i32[3,2,3] = convert_element_type[new_dtype=int32 weak_type=False] f
          g:i32[3,2,3] = cumsum[axis=0 reverse=False] h
        in (g,) }
    ] f
    i:i32[2,3] = argmax[axes=(0,) index_dtype=int32] g
    j:i32[2,3] = clamp 0:i32[] i 2:i32[]
    k:i32[3] = broadcast_in_dim c
    l:bool[2,3] = eq j 0:i32[]
    m:i32[3] = stop_gradient k
    n:i32[2,3] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] m
    o:i32[2,3] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] k
    p:i32[2,3] = select_n l n o
    q:f32[2,3] = stop_gradient a
    r:f32[2,3] = select_n l q a
    s:f32[2,3] = add r 1.0:f32[]
    t:bool[2,3] = eq j 1:i32[]
    u:i32[3] = stop_gradient k
    v:i32[2,3] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] u
    w:i32[2,3] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] k
    x:i32[2,3] = select_n t v w
    y:f32[2,3] = stop_gradient a
    z:f32[2,3] = select_n t y a
    ba:f32[2,3] = neg z
    bb:bool[2,3] = eq j 2:i32[]
    bc:i32[3] = stop_gradient k
    bd:i32[2,3] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] bc
    be:i32[2,3] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] k
    bf:i32[2,3] = select_n bb bd be
    bg:f32[2,3] = stop_gradient a
    bh:f32[2,3] = select_n bb bg a
    bi:i32[2,3] = copy bf
    bj:f32[2,3] = convert_element_type[new_dtype=float32 weak_type=False] bi
    bk:f32[2,3] = select_n j s ba bj
  in (bk,) } in
{ lambda ; bl:f32[2,3]. let
    bm:bool[2,3] = lt bl 2.0:f32[]
    bn:bool[2,3] = gt bl 4.0:f32[]
    bo:bool[1,2,3] = broadcast_in_dim[broadcast_dimensions=(1, 2)] bm
    bp:bool[1,2,3] = broadcast_in_dim[broadcast_dimensions=(1, 2)] bn
    bq:bool[2,2,3] = concatenate[dimension=0] bo bp
    br:f32[2,3] = jit[name=_piecewise jaxpr=_piecewise] bl bq 7:i32[]
  in (br,) }"""

EXPECTED['int'] = """\
let _piecewise = { lambda ; a:i32[5] b:bool[1,5] c:i32[]. let
    d:bool[1,5] = broadcast_in_dim False:bool[]
    e:bool[2,5] = concatenate[dimension=0] d b
    f:i32[2,5] = jit[
      name=cumsum
      jaxpr={ lambda ; e:bool[2,5]. let
          g:i32[2,5] = convert_element_type[new_dtype=int32 weak_type=False] e
          f:i32[2,5] = cumsum[axis=0 reverse=False] g
        in (f,) }
    ] e
    h:i32[5] = argmax[axes=(0,) index_dtype=int32] f
    i:i32[5] = clamp 0:i32[] h 1:i32[]
    j:i32[5] = broadcast_in_dim c
    k:bool[5] = eq i 0:i32[]
    l:i32[5] = stop_gradient j
    m:i32[5] = select_n k l j
    n:i32[5] = stop_gradient a
    o:i32[5] = select_n k n a
    p:i32[5] = copy m
    q:i32[5] = convert_element_type[new_dtype=int32 weak_type=False] p
    r:bool[5] = eq i 1:i32[]
    s:i32[5] = stop_gradient j
    t:i32[5] = select_n r s j
    u:i32[5] = stop_gradient a
    v:i32[5] = select_n r u a
    w:i32[5] = mul v 2:i32[]
    x:i32[5] = select_n i q w
  in (x,) } in
{ lambda ; y:i32[5]. let
    z:bool[5] = lt y 2:i32[]
    ba:bool[1,5] = broadcast_in_dim[broadcast_dimensions=(1,)] z
    bb:i32[5] = jit[name=_piecewise jaxpr=_piecewise] y ba 0:i32[]
  in (bb,) }"""

EXPECTED['closs'] = """\
let _piecewise = { lambda ; a:f32[] b:f32[5] c:bool[1,5] d:i32[]. let
    e:bool[1,5] = broadcast_in_dim False:bool[]
    f:bool[2,5] = concatenate[dimension=0] e c
    g:i32[2,5] = jit[
      name=cumsum
      jaxpr={ lambda ; f:bool[2,5]. let
          h:i32[2,5] = convert_element_type[new_dtype=int32 weak_type=False] f
          g:i32[2,5] = cumsum[axis=0 reverse=False] h
        in (g,) }
    ] f
    i:i32[5] = argmax[axes=(0,) index_dtype=int32] g
    j:i32[5] = clamp 0:i32[] i 1:i32[]
    k:i32[5] = broadcast_in_dim d
    l:f32[5] = broadcast_in_dim a
    m:bool[5] = eq j 0:i32[]
    n:i32[5] = stop_gradient k
    o:i32[5] = select_n m n k
    p:f32[5] = stop_gradient l
    q:f32[5] = select_n m p l
    r:f32[5] = stop_gradient b
    s:f32[5] = select_n m r b
    t:i32[5] = copy o
    u:f32[5] = convert_element_type[new_dtype=float32 weak_type=False] t
    v:bool[5] = eq j 1:i32[]
    w:i32[5] = stop_gradient k
    x:i32[5] = select_n v w k
    y:f32[5] = stop_gradient l
    z:f32[5] = select_n v y l
    ba:f32[5] = stop_gradient b
    bb:f32[5] = select_n v ba b
    bc:f32[5] = mul bb z
    bd:f32[5] = select_n j u bc
  in (bd,) } in
{ lambda ; be:f32[5] bf:f32[]. let
    bg:bool[5] = lt be 0.0:f32[]
    bh:bool[1,5] = broadcast_in_dim[broadcast_dimensions=(1,)] bg
    bi:f32[5] = jit[name=_piecewise jaxpr=_piecewise] bf be bh 0:i32[]
  in (bi,) }"""

EXPECTED['scalarconst'] = """\
{ lambda ; a:f32[]. let
    b:bool[] = lt a 0.0:f32[]
    c:bool[] = gt a 1.0:f32[]
    d:bool[1] = broadcast_in_dim b
    e:bool[1] = broadcast_in_dim c
    f:bool[2] = concatenate[dimension=0] d e
    g:f32[] = jit[
      name=_piecewise
      jaxpr={ lambda ; a:f32[] f:bool[2] h:f32[] i:i32[]. let
          j:bool[1] = slice[limit_indices=(1,) start_indices=(0,) strides=None] f
          k:bool[1] = broadcast_in_dim False:bool[]
          l:bool[3] = concatenate[dimension=0] k f
          m:i32[3] = jit[
            name=cumsum
            jaxpr={ lambda ; l:bool[3]. let
                n:i32[3] = convert_element_type[new_dtype=int32 weak_type=False] l
                m:i32[3] = cumsum[axis=0 reverse=False] n
              in (m,) }
          ] l
          o:i32[] = argmax[axes=(0,) index_dtype=int32] m
          p:i32[] = clamp 0:i32[] o 2:i32[]
          g:f32[] = cond[
            branches=(
              { lambda ; q:f32[] r:i32[] s:f32[]. let
                  t:f32[] = copy q
                  u:f32[] = convert_element_type[
                    new_dtype=float32
                    weak_type=False
                  ] t
                in (u,) }
              { lambda ; v:f32[] w:i32[] x:f32[]. let y:f32[] = neg x in (y,) }
              { lambda ; z:f32[] ba:i32[] bb:f32[]. let
                  bc:i32[] = copy ba
                  bd:f32[] = convert_element_type[
                    new_dtype=float32
                    weak_type=False
                  ] bc
                in (bd,) }
            )
          ] p h i a
        in (g,) }
    ] a f 1.5:f32[] 3:i32[]
  in (g,) }"""

EXPECTED['scalarcond'] = """\
{ lambda a:bool[2]; b:f32[5]. let
    c:f32[5] = jit[
      name=_piecewise
      jaxpr={ lambda ; b:f32[5] a:bool[2] d:i32[]. let
          e:bool[1] = slice[limit_indices=(1,) start_indices=(0,) strides=None] a
          f:bool[1] = broadcast_in_dim False:bool[]
          g:bool[3] = concatenate[dimension=0] f a
          h:i32[3] = jit[
            name=cumsum
            jaxpr={ lambda ; g:bool[3]. let
                i:i32[3] = convert_element_type[new_dtype=int32 weak_type=False] g
                h:i32[3] = cumsum[axis=0 reverse=False] i
              in (h,) }
          ] g
          j:i32[] = argmax[axes=(0,) index_dtype=int32] h
          k:i32[] = clamp 0:i32[] j 2:i32[]
          c:f32[5] = cond[
            branches=(
              { lambda ; l:i32[] m:f32[5]. let
                  n:i32[] = copy l
                  o:f32[] = convert_element_type[
                    new_dtype=float32
                    weak_type=False
                  ] n
                  p:f32[5] = broadcast_in_dim o
                in (p,) }
              { lambda ; q:i32[] r:f32[5]. let s:f32[5] = neg r in (s,) }
              { lambda ; t:i32[] u:f32[5]. let
                  v:f32[5] = mul u 3.0:f32[]
                in (v,) }
            )
          ] k d b
        in (c,) }
    ] b a 0:i32[]
  in (c,) }"""

EXPECTED['f64'] = """\
let _piecewise = { lambda ; a:f64[5] b:bool[2,5] c:i64[]. let
    d:bool[1,5] = slice[limit_indices=(1, 5) start_indices=(0, 0) strides=None] b
    e:bool[1,5] = broadcast_in_dim False:bool[]
    f:bool[3,5] = concatenate[dimension=0] e b
    g:i64[3,5] = jit[
      name=cumsum
      jaxpr={ lambda ; f:bool[3,5]. let
          h:i64[3,5] = convert_element_type[new_dtype=int64 weak_type=False] f
          g:i64[3,5] = cumsum[axis=0 reverse=False] h
        in (g,) }
    ] f
    i:i64[5] = argmax[axes=(0,) index_dtype=int64] g
    j:i32[5] = convert_element_type[new_dtype=int32 weak_type=False] i
    k:i32[5] = clamp 0:i32[] j 2:i32[]
    l:i64[5] = broadcast_in_dim c
    m:bool[5] = eq k 0:i32[]
    n:i64[5] = stop_gradient l
    o:i64[5] = select_n m n l
    p:f64[5] = stop_gradient a
    q:f64[5] = select_n m p a
    r:f64[5] = add q 1.0:f64[]
    s:bool[5] = eq k 1:i32[]
    t:i64[5] = stop_gradient l
    u:i64[5] = select_n s t l
    v:f64[5] = stop_gradient a
    w:f64[5] = select_n s v a
    x:f64[5] = neg w
    y:bool[5] = eq k 2:i32[]
    z:i64[5] = stop_gradient l
    ba:i64[5] = select_n y z l
    bb:f64[5] = stop_gradient a
    bc:f64[5] = select_n y bb a
    bd:i64[5] = copy ba
    be:f64[5] = convert_element_type[new_dtype=float64 weak_type=False] bd
    bf:f64[5] = select_n k r x be
  in (bf,) } in
{ lambda ; bg:f64[5]. let
    bh:bool[5] = lt bg 0.0:f64[]
    bi:bool[5] = gt bg 1.0:f64[]
    bj:bool[1,5] = broadcast_in_dim[broadcast_dimensions=(1,)] bh
    bk:bool[1,5] = broadcast_in_dim[broadcast_dimensions=(1,)] bi
    bl:bool[2,5] = concatenate[dimension=0] bj bk
    bm:f64[5] = jit[name=_piecewise jaxpr=_piecewise] bg bl 2:i64[]
  in (bm,) }"""

EXPECTED['ident'] = """\
let _piecewise = { lambda ; a:f32[5] b:bool[1,5]. let
    c:bool[1,5] = broadcast_in_dim False:bool[]
    d:bool[2,5] = concatenate[dimension=0] c b
    e:i32[2,5] = jit[
      name=cumsum
      jaxpr={ lambda ; d:bool[2,5]. let
          f:i32[2,5] = convert_element_type[new_dtype=int32 weak_type=False] d
          e:i32[2,5] = cumsum[axis=0 reverse=False] f
        in (e,) }
    ] d
    g:i32[5] = argmax[axes=(0,) index_dtype=int32] e
    h:i32[5] = clamp 0:i32[] g 1:i32[]
    i:bool[5] = eq h 0:i32[]
    j:f32[5] = stop_gradient a
    k:f32[5] = select_n i j a
    l:bool[5] = eq h 1:i32[]
    m:f32[5] = stop_gradient a
    n:f32[5] = select_n l m a
  in (a,) } in
{ lambda ; o:f32[5]. let
    p:bool[5] = lt o 0.0:f32[]
    q:bool[1,5] = broadcast_in_dim[broadcast_dimensions=(1,)] p
    r:f32[5] = jit[name=_piecewise jaxpr=_piecewise] o q
  in (r,) }"""

EXPECTED['r3'] = """\
let _piecewise = { lambda ; a:f32[2,3,4] b:bool[1,2,3,4] c:i32[]. let
    d:bool[1,2,3,4] = broadcast_in_dim False:bool[]
    e:bool[2,2,3,4] = concatenate[dimension=0] d b
    f:i32[2,2,3,4] = jit[
      name=cumsum
      jaxpr={ lambda ; e:bool[2,2,3,4]. let
          g:i32[2,2,3,4] = convert_element_type[new_dtype=int32 weak_type=False] e
          f:i32[2,2,3,4] = cumsum[axis=0 reverse=False] g
        in (f,) }
    ] e
    h:i32[2,3,4] = argmax[axes=(0,) index_dtype=int32] f
    i:i32[2,3,4] = clamp 0:i32[] h 1:i32[]
    j:i32[4] = broadcast_in_dim c
    k:bool[2,3,4] = eq i 0:i32[]
    l:i32[4] = stop_gradient j
    m:i32[3,4] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] l
    n:i32[3,4] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] j
    o:i32[2,3,4] = broadcast_in_dim[
      broadcast_dimensions=(np.int64(1), np.int64(2))
    ] m
    p:i32[2,3,4] = broadcast_in_dim[
      broadcast_dimensions=(np.int64(1), np.int64(2))
    ] n
    q:i32[2,3,4] = select_n k o p
    r:f32[2,3,4] = stop_gradient a
    s:f32[2,3,4] = select_n k r a
    t:i32[2,3,4] = copy q
    u:f32[2,3,4] = convert_element_type[new_dtype=float32 weak_type=False] t
    v:bool[2,3,4] = eq i 1:i32[]
    w:i32[4] = stop_gradient j
    x:i32[3,4] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] w
    y:i32[3,4] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] j
    z:i32[2,3,4] = broadcast_in_dim[
      broadcast_dimensions=(np.int64(1), np.int64(2))
    ] x
    ba:i32[2,3,4] = broadcast_in_dim[
      broadcast_dimensions=(np.int64(1), np.int64(2))
    ] y
    bb:i32[2,3,4] = select_n v z ba
    bc:f32[2,3,4] = stop_gradient a
    bd:f32[2,3,4] = select_n v bc a
    be:f32[2,3,4] = neg bd
    bf:f32[2,3,4] = select_n i u be
  in (bf,) } in
{ lambda ; bg:f32[2,3,4]. let
    bh:bool[2,3,4] = lt bg 2.0:f32[]
    bi:bool[1,2,3,4] = broadcast_in_dim[broadcast_dimensions=(1, 2, 3)] bh
    bj:f32[2,3,4] = jit[name=_piecewise jaxpr=_piecewise] bg bi 7:i32[]
  in (bj,) }"""

EXPECTED['u2'] = """\
{ lambda a:bool[2]; b:f32[2,3]. let
    c:f32[2,3] = jit[
      name=_piecewise
      jaxpr={ lambda ; b:f32[2,3] a:bool[2] d:i32[]. let
          e:bool[1] = slice[limit_indices=(1,) start_indices=(0,) strides=None] a
          f:bool[1] = broadcast_in_dim False:bool[]
          g:bool[3] = concatenate[dimension=0] f a
          h:i32[3] = jit[
            name=cumsum
            jaxpr={ lambda ; g:bool[3]. let
                i:i32[3] = convert_element_type[new_dtype=int32 weak_type=False] g
                h:i32[3] = cumsum[axis=0 reverse=False] i
              in (h,) }
          ] g
          j:i32[] = argmax[axes=(0,) index_dtype=int32] h
          k:i32[] = clamp 0:i32[] j 2:i32[]
          c:f32[2,3] = cond[
            branches=(
              { lambda ; l:i32[] m:f32[2,3]. let
                  n:f32[2,3] = mul m 3.0:f32[]
                in (n,) }
              { lambda ; o:i32[] p:f32[2,3]. let q:f32[2,3] = neg p in (q,) }
              { lambda ; r:i32[] s:f32[2,3]. let
                  t:i32[] = copy r
                  u:f32[] = convert_element_type[
                    new_dtype=float32
                    weak_type=False
                  ] t
                  v:f32[3] = broadcast_in_dim u
                  w:f32[2,3] = broadcast_in_dim[
                    broadcast_dimensions=(np.int64(1),)
                  ] v
                in (w,) }
            )
          ] k d b
        in (c,) }
    ] b a 2:i32[]
  in (c,) }"""

EXPECTED['xs'] = """\
let _piecewise = { lambda ; a:f32[] b:bool[1,2,3] c:i32[]. let
    d:bool[1,2,3] = broadcast_in_dim False:bool[]
    e:bool[2,2,3] = concatenate[dimension=0] d b
    f:i32[2,2,3] = jit[
      name=cumsum
      jaxpr={ lambda ; e:bool[2,2,3]. let
          g:i32[2,2,3] = convert_element_type[new_dtype=int32 weak_type=False] e
          f:i32[2,2,3] = cumsum[axis=0 reverse=False] g
        in (f,) }
    ] e
    h:i32[2,3] = argmax[axes=(0,) index_dtype=int32] f
    i:i32[2,3] = clamp 0:i32[] h 1:i32[]
    j:i32[3] = broadcast_in_dim c
    k:f32[3] = broadcast_in_dim a
    l:bool[2,3] = eq i 0:i32[]
    m:i32[3] = stop_gradient j
    n:i32[2,3] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] m
    o:i32[2,3] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] j
    p:i32[2,3] = select_n l n o
    q:f32[3] = stop_gradient k
    r:f32[2,3] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] q
    s:f32[2,3] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] k
    t:f32[2,3] = select_n l r s
    u:i32[2,3] = copy p
    v:f32[2,3] = convert_element_type[new_dtype=float32 weak_type=False] u
    w:bool[2,3] = eq i 1:i32[]
    x:i32[3] = stop_gradient j
    y:i32[2,3] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] x
    z:i32[2,3] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] j
    ba:i32[2,3] = select_n w y z
    bb:f32[3] = stop_gradient k
    bc:f32[2,3] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] bb
    bd:f32[2,3] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] k
    be:f32[2,3] = select_n w bc bd
    bf:f32[2,3] = neg be
    bg:f32[2,3] = select_n i v bf
  in (bg,) } in
{ lambda ; bh:f32[2,3]. let
    bi:bool[2,3] = lt bh 2.0:f32[]
    bj:bool[1,2,3] = broadcast_in_dim[broadcast_dimensions=(1, 2)] bi
    bk:f32[2,3] = jit[name=_piecewise jaxpr=_piecewise] 2.0:f32[] bj 7:i32[]
  in (bk,) }"""

EXPECTED['jnp_cumsum'] = """\
{ lambda ; a:f32[7]. let
    b:f32[7] = jit[
      name=cumsum
      jaxpr={ lambda ; a:f32[7]. let
          b:f32[7] = cumsum[axis=0 reverse=False] a
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_cumsum_ax'] = """\
{ lambda ; a:f32[3,4]. let
    b:f32[3,4] = jit[
      name=cumsum
      jaxpr={ lambda ; a:f32[3,4]. let
          b:f32[3,4] = cumsum[axis=1 reverse=False] a
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_cumprod'] = """\
{ lambda ; a:f32[7]. let
    b:f32[7] = jit[
      name=cumprod
      jaxpr={ lambda ; a:f32[7]. let
          b:f32[7] = cumprod[axis=0 reverse=False] a
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_sort'] = """\
{ lambda ; a:f32[7]. let
    b:f32[7] = jit[
      name=sort
      jaxpr={ lambda ; a:f32[7]. let
          b:f32[7] = sort[dimension=0 is_stable=True num_keys=1] a
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_argsort'] = """\
{ lambda ; a:f32[7]. let
    b:i32[7] = jit[
      name=argsort
      jaxpr={ lambda ; a:f32[7]. let
          c:i32[7] = iota[dimension=0 dtype=int32 shape=(7,) sharding=None] 
          d:f32[7] b:i32[7] = sort[dimension=0 is_stable=True num_keys=1] a c
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_round'] = """\
{ lambda ; a:f32[7]. let
    b:f32[7] = jit[
      name=round
      jaxpr={ lambda ; a:f32[7]. let
          c:f32[7] = mul a 10.0:f32[]
          d:f32[7] = round[rounding_method=1] c
          b:f32[7] = div d 10.0:f32[]
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_round0'] = """\
{ lambda ; a:f32[7]. let
    b:f32[7] = jit[
      name=round
      jaxpr={ lambda ; a:f32[7]. let
          b:f32[7] = round[rounding_method=1] a
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_where'] = """\
{ lambda ; a:f32[5]. let
    b:bool[5] = gt a 0.0:f32[]
    c:f32[5] = jit[
      name=_where
      jaxpr={ lambda ; b:bool[5] a:f32[5] d:f32[]. let
          e:f32[] = convert_element_type[new_dtype=float32 weak_type=False] d
          f:f32[5] = broadcast_in_dim e
          c:f32[5] = select_n b f a
        in (c,) }
    ] b a 0.0:f32[]
  in (c,) }"""

EXPECTED['jnp_where_bcast'] = """\
{ lambda ; a:f32[4] b:f32[3,4]. let
    c:bool[4] = gt a 0.0:f32[]
    d:f32[3,4] = jit[
      name=_where
      jaxpr={ lambda ; c:bool[4] a:f32[4] b:f32[3,4]. let
          e:bool[3,4] = broadcast_in_dim[broadcast_dimensions=(1,)] c
          f:f32[3,4] = broadcast_in_dim[broadcast_dimensions=(1,)] a
          d:f32[3,4] = select_n e b f
        in (d,) }
    ] c a b
  in (d,) }"""

EXPECTED['jnp_where_int'] = """\
{ lambda ; a:i32[5]. let
    b:bool[5] = gt a 2:i32[]
    c:f32[5] = jit[
      name=_where
      jaxpr={ lambda ; b:bool[5] a:i32[5] d:f32[]. let
          e:f32[5] = convert_element_type[new_dtype=float32 weak_type=True] a
          f:f32[5] = broadcast_in_dim d
          c:f32[5] = select_n b f e
        in (c,) }
    ] b a 1.5:f32[]
  in (c,) }"""

EXPECTED['jnp_where_scalar_cond'] = """\
{ lambda ; a:f32[5]. let
    b:f32[5] = neg a
    c:f32[5] = jit[
      name=_where
      jaxpr={ lambda ; d:bool[] a:f32[5] b:f32[5]. let
          c:f32[5] = select_n d b a
        in (c,) }
    ] True:bool[] a b
  in (c,) }"""

EXPECTED['jnp_clip'] = """\
{ lambda ; a:f32[5]. let
    b:f32[5] = jit[
      name=clip
      jaxpr={ lambda ; a:f32[5] c:i32[] d:i32[]. let
          e:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c
          f:f32[5] = max e a
          g:f32[] = convert_element_type[new_dtype=float32 weak_type=False] d
          b:f32[5] = min g f
        in (b,) }
    ] a 0:i32[] 1:i32[]
  in (b,) }"""

EXPECTED['jnp_clip_min'] = """\
{ lambda ; a:f32[5]. let
    b:f32[5] = jit[
      name=clip
      jaxpr={ lambda ; a:f32[5] c:f32[]. let
          d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c
          b:f32[5] = max d a
        in (b,) }
    ] a 0.5:f32[]
  in (b,) }"""

EXPECTED['jnp_clip_max_array'] = """\
{ lambda ; a:f32[3,4] b:f32[4]. let
    c:f32[3,4] = jit[
      name=clip
      jaxpr={ lambda ; a:f32[3,4] b:f32[4]. let
          d:f32[1,4] = broadcast_in_dim[broadcast_dimensions=(1,)] b
          c:f32[3,4] = min d a
        in (c,) }
    ] a b
  in (c,) }"""

EXPECTED['jnp_clip_int'] = """\
{ lambda ; a:i32[5]. let
    b:i32[5] = jit[
      name=clip
      jaxpr={ lambda ; a:i32[5] c:i32[] d:i32[]. let
          e:i32[] = convert_element_type[new_dtype=int32 weak_type=False] c
          f:i32[5] = max e a
          g:i32[] = convert_element_type[new_dtype=int32 weak_type=False] d
          b:i32[5] = min g f
        in (b,) }
    ] a 1:i32[] 3:i32[]
  in (b,) }"""

EXPECTED['jnp_nan_to_num'] = """\
let _where = { lambda ; a:bool[7] b:f32[] c:f32[7]. let
    d:f32[7] = broadcast_in_dim b
    e:f32[7] = select_n a c d
  in (e,) } in
{ lambda ; f:f32[7]. let
    g:f32[7] = jit[
      name=nan_to_num
      jaxpr={ lambda ; f:f32[7]. let
          h:bool[7] = ne f f
          i:f32[7] = jit[name=_where jaxpr=_where] h 0.0:f32[] f
          j:bool[7] = eq i inf:f32[]
          k:f32[7] = jit[name=_where jaxpr=_where] j 3.4028234663852886e+38:f32[]
            i
          l:bool[7] = eq k -inf:f32[]
          g:f32[7] = jit[name=_where jaxpr=_where] l -3.4028234663852886e+38:f32[]
            k
        in (g,) }
    ] f
  in (g,) }"""

EXPECTED['jnp_diff'] = """\
{ lambda ; a:f32[7]. let
    b:f32[6] = jit[
      name=diff
      jaxpr={ lambda ; a:f32[7]. let
          c:f32[6] = slice[limit_indices=(7,) start_indices=(1,) strides=None] a
          d:f32[6] = slice[limit_indices=(6,) start_indices=(0,) strides=None] a
          b:f32[6] = sub c d
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_diff_2'] = """\
{ lambda ; a:f32[3,4]. let
    b:f32[1,4] = jit[
      name=diff
      jaxpr={ lambda ; a:f32[3,4]. let
          c:f32[2,4] = slice[
            limit_indices=(3, 4)
            start_indices=(1, 0)
            strides=None
          ] a
          d:f32[2,4] = slice[
            limit_indices=(2, 4)
            start_indices=(0, 0)
            strides=None
          ] a
          e:f32[2,4] = sub c d
          f:f32[1,4] = slice[
            limit_indices=(2, 4)
            start_indices=(1, 0)
            strides=None
          ] e
          g:f32[1,4] = slice[
            limit_indices=(1, 4)
            start_indices=(0, 0)
            strides=None
          ] e
          b:f32[1,4] = sub f g
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_angle'] = """\
{ lambda ; a:f32[7]. let
    b:f32[7] = jit[
      name=angle
      jaxpr={ lambda ; a:f32[7]. let
          c:f32[7] = broadcast_in_dim 0.0:f32[]
          d:f32[7] = atan2 c a
          b:f32[7] = mul d 57.295780181884766:f32[]
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_append'] = """\
{ lambda ; a:f32[7]. let
    b:f32[14] = jit[
      name=append
      jaxpr={ lambda ; a:f32[7] c:f32[7]. let
          b:f32[14] = concatenate[dimension=0] a c
        in (b,) }
    ] a a
  in (b,) }"""

EXPECTED['jnp_append_axis'] = """\
{ lambda ; a:f32[3,4]. let
    b:f32[3,8] = jit[
      name=append
      jaxpr={ lambda ; a:f32[3,4] c:f32[3,4]. let
          b:f32[3,8] = concatenate[dimension=1] a c
        in (b,) }
    ] a a
  in (b,) }"""

EXPECTED['jit_same_arg_twice'] = """\
{ lambda ; a:f32[7]. let
    b:f32[7] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[7] c:f32[7]. let b:f32[7] = mul a c in (b,) }
    ] a a
    d:f32[7] = add b 1.0:f32[]
  in (d,) }"""

EXPECTED['jnp_trunc'] = """\
{ lambda ; a:f32[7]. let
    b:f32[7] = jit[
      name=trunc
      jaxpr={ lambda ; a:f32[7]. let
          c:bool[7] = lt a 0.0:f32[]
          d:f32[7] = ceil a
          e:f32[7] = floor a
          b:f32[7] = jit[
            name=_where
            jaxpr={ lambda ; c:bool[7] d:f32[7] e:f32[7]. let
                b:f32[7] = select_n c e d
              in (b,) }
          ] c d e
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_tril'] = """\
{ lambda ; a:f32[3,4]. let
    b:f32[3,4] = jit[
      name=tril
      jaxpr={ lambda ; a:f32[3,4]. let
          c:i32[3,4] = iota[dimension=0 dtype=int32 shape=(3, 4) sharding=None] 
          d:i32[3,4] = add c 0:i32[]
          e:i32[3,4] = iota[dimension=1 dtype=int32 shape=(3, 4) sharding=None] 
          f:bool[3,4] = ge d e
          g:f32[3,4] = broadcast_in_dim 0.0:f32[]
          b:f32[3,4] = select_n f g a
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_tril_neg'] = """\
{ lambda ; a:f32[2,3,4]. let
    b:f32[2,3,4] = jit[
      name=tril
      jaxpr={ lambda ; a:f32[2,3,4]. let
          c:i32[3,4] = iota[dimension=0 dtype=int32 shape=(3, 4) sharding=None] 
          d:i32[3,4] = add c -1:i32[]
          e:i32[3,4] = iota[dimension=1 dtype=int32 shape=(3, 4) sharding=None] 
          f:bool[3,4] = ge d e
          g:bool[2,3,4] = broadcast_in_dim[broadcast_dimensions=(1, 2)] f
          h:f32[2,3,4] = broadcast_in_dim 0.0:f32[]
          b:f32[2,3,4] = select_n g h a
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_triu'] = """\
{ lambda ; a:f32[3,4]. let
    b:f32[3,4] = jit[
      name=triu
      jaxpr={ lambda ; a:f32[3,4]. let
          c:i32[3,4] = iota[dimension=0 dtype=int32 shape=(3, 4) sharding=None] 
          d:i32[3,4] = add c 0:i32[]
          e:i32[3,4] = iota[dimension=1 dtype=int32 shape=(3, 4) sharding=None] 
          f:bool[3,4] = ge d e
          g:f32[3,4] = broadcast_in_dim 0.0:f32[]
          b:f32[3,4] = select_n f a g
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_trace'] = """\
{ lambda ; a:f32[3,4]. let
    b:f32[] = jit[
      name=trace
      jaxpr={ lambda ; a:f32[3,4]. let
          c:i32[3,4] = iota[dimension=0 dtype=int32 shape=(3, 4) sharding=None] 
          d:i32[3,4] = iota[dimension=1 dtype=int32 shape=(3, 4) sharding=None] 
          e:i32[3,4] = add c 0:i32[]
          f:bool[3,4] = eq e d
          g:f32[3,4] = broadcast_in_dim 0.0:f32[]
          h:f32[3,4] = jit[
            name=_where
            jaxpr={ lambda ; f:bool[3,4] a:f32[3,4] g:f32[3,4]. let
                h:f32[3,4] = select_n f g a
              in (h,) }
          ] f a g
          b:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] h
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_trace_axes'] = """\
{ lambda ; a:f32[2,3,4]. let
    b:f32[2] = jit[
      name=trace
      jaxpr={ lambda ; a:f32[2,3,4]. let
          c:i32[3,4] = iota[dimension=0 dtype=int32 shape=(3, 4) sharding=None] 
          d:i32[3,4] = iota[dimension=1 dtype=int32 shape=(3, 4) sharding=None] 
          e:i32[3,4] = add c 0:i32[]
          f:bool[3,4] = eq e d
          g:f32[2,3,4] = broadcast_in_dim 0.0:f32[]
          h:f32[2,3,4] = jit[
            name=_where
            jaxpr={ lambda ; f:bool[3,4] a:f32[2,3,4] g:f32[2,3,4]. let
                i:bool[2,3,4] = broadcast_in_dim[broadcast_dimensions=(1, 2)] f
                h:f32[2,3,4] = select_n i g a
              in (h,) }
          ] f a g
          b:f32[2] = reduce_sum[axes=(1, 2) out_sharding=None] h
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_trace_int'] = """\
{ lambda ; a:i32[3,4]. let
    b:i32[] = jit[
      name=trace
      jaxpr={ lambda ; a:i32[3,4]. let
          c:i32[3,4] = iota[dimension=0 dtype=int32 shape=(3, 4) sharding=None] 
          d:i32[3,4] = iota[dimension=1 dtype=int32 shape=(3, 4) sharding=None] 
          e:i32[3,4] = add c 0:i32[]
          f:bool[3,4] = eq e d
          g:i32[3,4] = broadcast_in_dim 0:i32[]
          h:i32[3,4] = jit[
            name=_where
            jaxpr={ lambda ; f:bool[3,4] a:i32[3,4] g:i32[3,4]. let
                h:i32[3,4] = select_n f g a
              in (h,) }
          ] f a g
          b:i32[] = reduce_sum[axes=(0, 1) out_sharding=None] h
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_eye'] = """\
{ lambda ; a:f32[]. let
    b:i32[3,3] = iota[dimension=0 dtype=int32 shape=(3, 3) sharding=None] 
    c:i32[3,3] = iota[dimension=1 dtype=int32 shape=(3, 3) sharding=None] 
    d:i32[3,3] = add b 0:i32[]
    e:bool[3,3] = eq d c
    f:f32[3,3] = convert_element_type[new_dtype=float32 weak_type=False] e
    g:f32[3,3] = add f a
  in (g,) }"""

EXPECTED['jnp_tri'] = """\
{ lambda ; a:f32[]. let
    b:i32[3,4] = iota[dimension=0 dtype=int32 shape=(3, 4) sharding=None] 
    c:i32[3,4] = add b 1:i32[]
    d:i32[3,4] = iota[dimension=1 dtype=int32 shape=(3, 4) sharding=None] 
    e:bool[3,4] = ge c d
    f:f32[3,4] = convert_element_type[new_dtype=float32 weak_type=False] e
    g:f32[3,4] = add f a
  in (g,) }"""

EXPECTED['jnp_fmax'] = """\
{ lambda ; a:f32[7] b:f32[7]. let
    c:f32[7] = jit[
      name=fmax
      jaxpr={ lambda ; a:f32[7] b:f32[7]. let
          d:bool[7] = gt a b
          e:bool[7] = ne b b
          f:bool[7] = or d e
          c:f32[7] = jit[
            name=_where
            jaxpr={ lambda ; f:bool[7] a:f32[7] b:f32[7]. let
                c:f32[7] = select_n f b a
              in (c,) }
          ] f a b
        in (c,) }
    ] a b
  in (c,) }"""

EXPECTED['jnp_fmax_bcast'] = """\
{ lambda ; a:f32[3,4] b:f32[4]. let
    c:f32[3,4] = jit[
      name=fmax
      jaxpr={ lambda ; a:f32[3,4] b:f32[4]. let
          d:f32[1,4] = broadcast_in_dim[broadcast_dimensions=(1,)] b
          e:bool[3,4] = gt a d
          f:bool[4] = ne b b
          g:bool[1,4] = broadcast_in_dim[broadcast_dimensions=(1,)] f
          h:bool[3,4] = or e g
          c:f32[3,4] = jit[
            name=_where
            jaxpr={ lambda ; h:bool[3,4] a:f32[3,4] b:f32[4]. let
                i:f32[3,4] = broadcast_in_dim[broadcast_dimensions=(1,)] b
                c:f32[3,4] = select_n h i a
              in (c,) }
          ] h a b
        in (c,) }
    ] a b
  in (c,) }"""

EXPECTED['jnp_fmin'] = """\
{ lambda ; a:f32[7] b:f32[7]. let
    c:f32[7] = jit[
      name=fmin
      jaxpr={ lambda ; a:f32[7] b:f32[7]. let
          d:bool[7] = lt a b
          e:bool[7] = ne b b
          f:bool[7] = or d e
          c:f32[7] = jit[
            name=_where
            jaxpr={ lambda ; f:bool[7] a:f32[7] b:f32[7]. let
                c:f32[7] = select_n f b a
              in (c,) }
          ] f a b
        in (c,) }
    ] a b
  in (c,) }"""

EXPECTED['jnp_fmin_scalar'] = """\
{ lambda ; a:f32[7]. let
    b:f32[7] = jit[
      name=fmin
      jaxpr={ lambda ; a:f32[7] c:f32[]. let
          d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c
          e:bool[7] = lt a d
          f:bool[] = ne c c
          g:bool[] = convert_element_type[new_dtype=bool weak_type=False] f
          h:bool[7] = or e g
          b:f32[7] = jit[
            name=_where
            jaxpr={ lambda ; h:bool[7] a:f32[7] c:f32[]. let
                i:f32[] = convert_element_type[
                  new_dtype=float32
                  weak_type=False
                ] c
                j:f32[7] = broadcast_in_dim i
                b:f32[7] = select_n h j a
              in (b,) }
          ] h a c
        in (b,) }
    ] a 1.0:f32[]
  in (b,) }"""

EXPECTED['jnp_count_nonzero'] = """\
{ lambda ; a:f32[3,4]. let
    b:i32[] = jit[
      name=count_nonzero
      jaxpr={ lambda ; a:f32[3,4]. let
          c:bool[3,4] = ne a 0.0:f32[]
          d:i32[3,4] = convert_element_type[new_dtype=int32 weak_type=False] c
          b:i32[] = reduce_sum[axes=(0, 1) out_sharding=None] d
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_count_nonzero_bool'] = """\
{ lambda ; a:f32[3,4]. let
    b:bool[3,4] = gt a 2.0:f32[]
    c:i32[1,4] = jit[
      name=count_nonzero
      jaxpr={ lambda ; b:bool[3,4]. let
          d:bool[3,4] = ne b False:bool[]
          e:i32[3,4] = convert_element_type[new_dtype=int32 weak_type=False] d
          f:i32[4] = reduce_sum[axes=(0,) out_sharding=None] e
          c:i32[1,4] = broadcast_in_dim[broadcast_dimensions=(1,)] f
        in (c,) }
    ] b
  in (c,) }"""

EXPECTED['jnp_kron'] = """\
{ lambda ; a:f32[2,2] b:f32[2,2]. let
    c:f32[4,4] = jit[
      name=kron
      jaxpr={ lambda ; a:f32[2,2] b:f32[2,2]. let
          d:f32[2,1,2,1] = broadcast_in_dim[broadcast_dimensions=(0, 2)] a
          e:f32[1,2,1,2] = broadcast_in_dim[broadcast_dimensions=(1, 3)] b
          f:f32[2,2,2,2] = mul d e
          c:f32[4,4] = reshape[dimensions=None new_sizes=(4, 4) sharding=None] f
        in (c,) }
    ] a b
  in (c,) }"""

EXPECTED['jnp_kron_ranks'] = """\
{ lambda ; a:i32[3] b:f32[2,2]. let
    c:f32[2,6] = jit[
      name=kron
      jaxpr={ lambda ; a:i32[3] b:f32[2,2]. let
          d:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] a
          e:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] d
          f:f32[1,1,3,1] = broadcast_in_dim[broadcast_dimensions=(0, 2)] e
          g:f32[1,2,1,2] = broadcast_in_dim[broadcast_dimensions=(1, 3)] b
          h:f32[1,2,3,2] = mul f g
          c:f32[2,6] = reshape[dimensions=None new_sizes=(2, 6) sharding=None] h
        in (c,) }
    ] a b
  in (c,) }"""

EXPECTED['jnp_isclose'] = """\
let isclose = { lambda ; a:f32[7] b:f32[7]. let
    c:bool[7] = ne a a
    d:bool[7] = ne b b
    e:bool[7] = and c d
    f:bool[7] = is_finite b
    g:f32[7] = sub a b
    h:f32[7] = abs g
    i:f32[7] = abs b
    j:f32[7] = mul 9.999999747378752e-06:f32[] i
    k:f32[7] = add 9.99999993922529e-09:f32[] j
    l:bool[7] = le h k
    m:bool[7] = eq a b
    n:bool[7] = and f l
    o:bool[7] = or m n
  in (o,) } in
{ lambda ; p:f32[7] q:f32[7]. let
    r:bool[7] = jit[name=isclose jaxpr=isclose] p q
  in (r,) }"""

EXPECTED['jnp_isclose_nan_int'] = """\
let isclose = { lambda ; a:i32[5] b:i32[]. let
    c:f32[5] = convert_element_type[new_dtype=float32 weak_type=False] a
    d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b
    e:bool[5] = ne c c
    f:bool[] = ne d d
    g:bool[5] = and e f
    h:bool[] = is_finite d
    i:f32[5] = sub c d
    j:f32[5] = abs i
    k:f32[] = abs d
    l:f32[] = mul 9.999999747378752e-06:f32[] k
    m:f32[] = add 9.99999993922529e-09:f32[] l
    n:bool[5] = le j m
    o:bool[5] = eq c d
    p:bool[5] = and h n
    q:bool[5] = or o p
    r:bool[5] = or q g
  in (r,) } in
{ lambda ; s:i32[5] t:i32[]. let
    u:bool[5] = jit[name=isclose jaxpr=isclose] s t
  in (u,) }"""

EXPECTED['jnp_allclose'] = """\
let isclose = { lambda ; a:f32[7] b:f32[7] c:f32[] d:f32[]. let
    e:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c
    f:f32[] = convert_element_type[new_dtype=float32 weak_type=False] d
    g:bool[7] = ne a a
    h:bool[7] = ne b b
    i:bool[7] = and g h
    j:bool[7] = is_finite b
    k:f32[7] = sub a b
    l:f32[7] = abs k
    m:f32[7] = abs b
    n:f32[7] = mul e m
    o:f32[7] = add f n
    p:bool[7] = le l o
    q:bool[7] = eq a b
    r:bool[7] = and j p
    s:bool[7] = or q r
  in (s,) } in
{ lambda ; t:f32[7] u:f32[7]. let
    v:bool[] = jit[
      name=allclose
      jaxpr={ lambda ; t:f32[7] u:f32[7]. let
          w:bool[7] = jit[name=isclose jaxpr=isclose] t u 1e-05:f32[] 1e-08:f32[]
          v:bool[] = reduce_and[axes=(0,)] w
        in (v,) }
    ] t u
  in (v,) }"""

EXPECTED['jnp_allclose_tol'] = """\
let isclose = { lambda ; a:f32[3,4] b:f32[4] c:f32[] d:f32[]. let
    e:f32[1,4] = broadcast_in_dim[broadcast_dimensions=(1,)] b
    f:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c
    g:f32[] = convert_element_type[new_dtype=float32 weak_type=False] d
    h:bool[3,4] = ne a a
    i:bool[1,4] = ne e e
    j:bool[3,4] = and h i
    k:bool[1,4] = is_finite e
    l:f32[3,4] = sub a e
    m:f32[3,4] = abs l
    n:f32[1,4] = abs e
    o:f32[1,4] = mul f n
    p:f32[1,4] = add g o
    q:bool[3,4] = le m p
    r:bool[3,4] = eq a e
    s:bool[3,4] = and k q
    t:bool[3,4] = or r s
  in (t,) } in
{ lambda ; u:f32[3,4] v:f32[4]. let
    w:bool[] = jit[
      name=allclose
      jaxpr={ lambda ; u:f32[3,4] v:f32[4] x:f32[] y:f32[]. let
          z:bool[3,4] = jit[name=isclose jaxpr=isclose] u v y x
          w:bool[] = reduce_and[axes=(0, 1)] z
        in (w,) }
    ] u v 0.5:f32[] 0.1:f32[]
  in (w,) }"""

EXPECTED['jit_python_float_arg'] = """\
{ lambda ; a:f32[7]. let
    b:f32[7] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[7] c:f32[]. let
          d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c
          b:f32[7] = mul a d
        in (b,) }
    ] a 0.1:f32[]
  in (b,) }"""

EXPECTED['jnp_flip'] = """\
{ lambda ; a:f32[3,4]. let
    b:f32[3,4] = jit[
      name=_flip
      jaxpr={ lambda ; a:f32[3,4]. let
          b:f32[3,4] = rev[dimensions=(0, 1)] a
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_flip_axes'] = """\
{ lambda ; a:f32[2,3,4]. let
    b:f32[2,3,4] = jit[
      name=_flip
      jaxpr={ lambda ; a:f32[2,3,4]. let
          b:f32[2,3,4] = rev[dimensions=(0, 2)] a
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_fliplr'] = """\
{ lambda ; a:f32[3,4]. let
    b:f32[3,4] = jit[
      name=_flip
      jaxpr={ lambda ; a:f32[3,4]. let
          b:f32[3,4] = rev[dimensions=(1,)] a
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_ptp'] = """\
{ lambda ; a:f32[3,4]. let
    b:f32[] = jit[
      name=_ptp
      jaxpr={ lambda ; a:f32[3,4]. let
          c:f32[] = reduce_max[axes=(0, 1)] a
          d:f32[] = reduce_min[axes=(0, 1)] a
          b:f32[] = sub c d
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_ptp_axis'] = """\
{ lambda ; a:i32[3,4]. let
    b:i32[3,1] = jit[
      name=_ptp
      jaxpr={ lambda ; a:i32[3,4]. let
          c:i32[3] = reduce_max[axes=(1,)] a
          d:i32[3,1] = broadcast_in_dim[broadcast_dimensions=(0,)] c
          e:i32[3] = reduce_min[axes=(1,)] a
          f:i32[3,1] = broadcast_in_dim[broadcast_dimensions=(0,)] e
          b:i32[3,1] = sub d f
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_signbit'] = """\
{ lambda ; a:f32[7]. let
    b:bool[7] = jit[
      name=signbit
      jaxpr={ lambda ; a:f32[7]. let
          c:i32[7] = bitcast_convert_type[new_dtype=int32] a
          d:i32[7] = shift_right_arithmetic c 31:i32[]
          b:bool[7] = convert_element_type[new_dtype=bool weak_type=False] d
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_signbit_int'] = """\
{ lambda ; a:i32[5]. let
    b:bool[5] = jit[
      name=signbit
      jaxpr={ lambda ; a:i32[5]. let b:bool[5] = lt a 0:i32[] in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_copysign'] = """\
{ lambda ; a:f32[7]. let
    b:f32[7] = neg a
    c:f32[7] = jit[
      name=copysign
      jaxpr={ lambda ; a:f32[7] b:f32[7]. let
          d:bool[7] = jit[
            name=signbit
            jaxpr={ lambda ; b:f32[7]. let
                e:i32[7] = bitcast_convert_type[new_dtype=int32] b
                f:i32[7] = shift_right_arithmetic e 31:i32[]
                d:bool[7] = convert_element_type[new_dtype=bool weak_type=False] f
              in (d,) }
          ] b
          g:f32[7] = abs a
          h:f32[7] = neg g
          i:f32[7] = abs a
          c:f32[7] = jit[
            name=_where
            jaxpr={ lambda ; d:bool[7] h:f32[7] i:f32[7]. let
                c:f32[7] = select_n d i h
              in (c,) }
          ] d h i
        in (c,) }
    ] a b
  in (c,) }"""

EXPECTED['jnp_copysign_int_scalar'] = """\
{ lambda ; a:i32[3]. let
    b:f32[3] = jit[
      name=copysign
      jaxpr={ lambda ; a:i32[3] c:i32[]. let
          d:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] a
          e:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c
          f:bool[] = jit[
            name=signbit
            jaxpr={ lambda ; e:f32[]. let
                g:i32[] = bitcast_convert_type[new_dtype=int32] e
                h:i32[] = shift_right_arithmetic g 31:i32[]
                f:bool[] = convert_element_type[new_dtype=bool weak_type=False] h
              in (f,) }
          ] e
          i:f32[3] = abs d
          j:f32[3] = neg i
          k:f32[3] = abs d
          b:f32[3] = jit[
            name=_where
            jaxpr={ lambda ; f:bool[] j:f32[3] k:f32[3]. let
                b:f32[3] = select_n f k j
              in (b,) }
          ] f j k
        in (b,) }
    ] a -1:i32[]
  in (b,) }"""

EXPECTED['jnp_copysign_scalar_first'] = """\
{ lambda ; a:f32[7]. let
    b:f32[7] = jit[
      name=copysign
      jaxpr={ lambda ; c:f32[] a:f32[7]. let
          d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c
          e:bool[7] = jit[
            name=signbit
            jaxpr={ lambda ; a:f32[7]. let
                f:i32[7] = bitcast_convert_type[new_dtype=int32] a
                g:i32[7] = shift_right_arithmetic f 31:i32[]
                e:bool[7] = convert_element_type[new_dtype=bool weak_type=False] g
              in (e,) }
          ] a
          h:f32[] = abs d
          i:f32[] = neg h
          j:f32[] = abs d
          b:f32[7] = jit[
            name=_where
            jaxpr={ lambda ; e:bool[7] i:f32[] j:f32[]. let
                k:f32[7] = broadcast_in_dim i
                l:f32[7] = broadcast_in_dim j
                b:f32[7] = select_n e l k
              in (b,) }
          ] e i j
        in (b,) }
    ] 2.0:f32[] a
  in (b,) }"""

EXPECTED['jnp_rint'] = """\
{ lambda ; a:f32[7]. let
    b:f32[7] = jit[
      name=rint
      jaxpr={ lambda ; a:f32[7]. let
          b:f32[7] = round[rounding_method=1] a
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_isinf'] = """\
{ lambda ; a:f32[7]. let
    b:bool[7] = jit[
      name=isinf
      jaxpr={ lambda ; a:f32[7]. let
          c:f32[7] = abs a
          b:bool[7] = eq c inf:f32[]
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_isinf_int'] = """\
{ lambda ; a:i32[3]. let
    b:bool[3] = jit[
      name=isinf
      jaxpr={ lambda ; a:i32[3]. let
          b:bool[3] = broadcast_in_dim False:bool[]
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_isreal'] = """\
{ lambda ; a:f32[7]. let
    b:bool[7] = jit[
      name=isreal
      jaxpr={ lambda ; a:f32[7]. let
          c:f32[7] = broadcast_in_dim 0.0:f32[]
          b:bool[7] = eq c 0.0:f32[]
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_iscomplex'] = """\
{ lambda ; a:f32[3,4]. let
    b:bool[3,4] = jit[
      name=iscomplex
      jaxpr={ lambda ; a:f32[3,4]. let
          c:f32[3,4] = broadcast_in_dim 0.0:f32[]
          b:bool[3,4] = ne c 0.0:f32[]
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_around'] = """\
{ lambda ; a:f32[7]. let
    b:f32[7] = jit[
      name=around
      jaxpr={ lambda ; a:f32[7]. let
          b:f32[7] = jit[
            name=round
            jaxpr={ lambda ; a:f32[7]. let
                b:f32[7] = round[rounding_method=1] a
              in (b,) }
          ] a
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_around_2'] = """\
{ lambda ; a:f32[7]. let
    b:f32[7] = jit[
      name=around
      jaxpr={ lambda ; a:f32[7]. let
          b:f32[7] = jit[
            name=round
            jaxpr={ lambda ; a:f32[7]. let
                c:f32[7] = mul a 100.0:f32[]
                d:f32[7] = round[rounding_method=1] c
                b:f32[7] = div d 100.0:f32[]
              in (b,) }
          ] a
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_fmod'] = """\
{ lambda ; a:f32[7] b:f32[7]. let
    c:f32[7] = jit[
      name=fmod
      jaxpr={ lambda ; a:f32[7] b:f32[7]. let c:f32[7] = rem a b in (c,) }
    ] a b
  in (c,) }"""

EXPECTED['jnp_fmod_scalar'] = """\
{ lambda ; a:f32[7]. let
    b:f32[7] = jit[
      name=fmod
      jaxpr={ lambda ; a:f32[7] c:f32[]. let
          d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c
          b:f32[7] = rem a d
        in (b,) }
    ] a 1.5:f32[]
  in (b,) }"""

EXPECTED['jnp_remainder'] = """\
{ lambda ; a:f32[7] b:f32[7]. let
    c:f32[7] = jit[
      name=remainder
      jaxpr={ lambda ; a:f32[7] b:f32[7]. let
          d:f32[7] = rem a b
          e:bool[7] = ne d 0.0:f32[]
          f:bool[7] = lt d 0.0:f32[]
          g:bool[7] = lt b 0.0:f32[]
          h:bool[7] = ne f g
          i:bool[7] = and h e
          j:f32[7] = add d b
          c:f32[7] = select_n i d j
        in (c,) }
    ] a b
  in (c,) }"""

EXPECTED['jnp_mod_scalar'] = """\
{ lambda ; a:f32[3,4]. let
    b:f32[3,4] = jit[
      name=remainder
      jaxpr={ lambda ; a:f32[3,4] c:f32[]. let
          d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c
          e:f32[3,4] = rem a d
          f:bool[3,4] = ne e 0.0:f32[]
          g:bool[3,4] = lt e 0.0:f32[]
          h:bool[] = lt d 0.0:f32[]
          i:bool[3,4] = ne g h
          j:bool[3,4] = and i f
          k:f32[3,4] = add e d
          b:f32[3,4] = select_n j e k
        in (b,) }
    ] a 1.5:f32[]
  in (b,) }"""

EXPECTED['jnp_modf'] = """\
{ lambda ; a:f32[7]. let
    b:f32[7] c:f32[7] = jit[
      name=modf
      jaxpr={ lambda ; a:f32[7]. let
          d:bool[7] = ge a 0.0:f32[]
          e:f32[7] = floor a
          f:f32[7] = ceil a
          c:f32[7] = jit[
            name=_where
            jaxpr={ lambda ; d:bool[7] e:f32[7] f:f32[7]. let
                c:f32[7] = select_n d f e
              in (c,) }
          ] d e f
          b:f32[7] = sub a c
        in (b, c) }
    ] a
  in (b, c) }"""

EXPECTED['jnp_hypot'] = """\
let hypot = { lambda ; a:f32[7] b:f32[7]. let
    c:f32[7] = abs a
    d:f32[7] = abs b
    e:bool[7] = eq c inf:f32[]
    f:bool[7] = eq d inf:f32[]
    g:bool[7] = or e f
    h:f32[7] = max c d
    i:f32[7] = min c d
    j:bool[7] = eq h 0.0:f32[]
    k:bool[7] = eq h 0.0:f32[]
    l:f32[7] = broadcast_in_dim 1.0:f32[]
    m:f32[7] = jit[name=_where jaxpr=_where] k l h
    n:f32[7] = div i m
    o:f32[7] = square n
    p:f32[7] = add 1.0:f32[] o
    q:f32[7] = sqrt p
    r:f32[7] = mul h q
    s:f32[7] = jit[name=_where jaxpr=_where] j h r
    t:f32[7] = jit[
      name=_where
      jaxpr={ lambda ; g:bool[7] u:f32[] s:f32[7]. let
          v:f32[7] = broadcast_in_dim u
          t:f32[7] = select_n g s v
        in (t,) }
    ] g inf:f32[] s
  in (t,) } in
let _where = { lambda ; w:bool[7] x:f32[7] y:f32[7]. let
    z:f32[7] = select_n w y x
  in (z,) } in
{ lambda ; ba:f32[7] bb:f32[7]. let
    bc:f32[7] = jit[name=hypot jaxpr=hypot] ba bb
  in (bc,) }"""

EXPECTED['jnp_hypot_int'] = """\
let hypot = { lambda ; a:i32[3] b:i32[]. let
    c:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] a
    d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b
    e:f32[3] = abs c
    f:f32[] = abs d
    g:bool[3] = eq e inf:f32[]
    h:bool[] = eq f inf:f32[]
    i:bool[3] = or g h
    j:f32[3] = max e f
    k:f32[3] = min e f
    l:bool[3] = eq j 0.0:f32[]
    m:bool[3] = eq j 0.0:f32[]
    n:f32[3] = broadcast_in_dim 1.0:f32[]
    o:f32[3] = jit[name=_where jaxpr=_where] m n j
    p:f32[3] = div k o
    q:f32[3] = square p
    r:f32[3] = add 1.0:f32[] q
    s:f32[3] = sqrt r
    t:f32[3] = mul j s
    u:f32[3] = jit[name=_where jaxpr=_where] l j t
    v:f32[3] = jit[
      name=_where
      jaxpr={ lambda ; i:bool[3] w:f32[] u:f32[3]. let
          x:f32[3] = broadcast_in_dim w
          v:f32[3] = select_n i u x
        in (v,) }
    ] i inf:f32[] u
  in (v,) } in
let _where = { lambda ; y:bool[3] z:f32[3] ba:f32[3]. let
    bb:f32[3] = select_n y ba z
  in (bb,) } in
{ lambda ; bc:i32[3]. let
    bd:f32[3] = jit[name=hypot jaxpr=hypot] bc 2:i32[]
  in (bd,) }"""

EXPECTED['jnp_nansum'] = """\
{ lambda ; a:f32[7]. let
    b:f32[] = jit[
      name=nansum
      jaxpr={ lambda ; a:f32[7]. let
          c:bool[7] = ne a a
          d:f32[7] = jit[
            name=_where
            jaxpr={ lambda ; c:bool[7] e:f32[] a:f32[7]. let
                f:f32[7] = broadcast_in_dim e
                d:f32[7] = select_n c a f
              in (d,) }
          ] c 0.0:f32[] a
          b:f32[] = reduce_sum[axes=(0,) out_sharding=None] d
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_nansum_int'] = """\
{ lambda ; a:i32[4]. let
    b:i32[] = jit[
      name=nansum
      jaxpr={ lambda ; a:i32[4]. let
          b:i32[] = reduce_sum[axes=(0,) out_sharding=None] a
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_nanprod'] = """\
{ lambda ; a:f32[3,4]. let
    b:f32[4] = jit[
      name=nanprod
      jaxpr={ lambda ; a:f32[3,4]. let
          c:bool[3,4] = ne a a
          d:f32[3,4] = jit[
            name=_where
            jaxpr={ lambda ; c:bool[3,4] e:f32[] a:f32[3,4]. let
                f:f32[3,4] = broadcast_in_dim e
                d:f32[3,4] = select_n c a f
              in (d,) }
          ] c 1.0:f32[] a
          b:f32[4] = reduce_prod[axes=(0,)] d
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_nanmax'] = """\
{ lambda ; a:f32[7]. let
    b:f32[] = jit[
      name=nanmax
      jaxpr={ lambda ; a:f32[7]. let
          c:bool[7] = ne a a
          d:f32[7] = jit[
            name=_where
            jaxpr={ lambda ; c:bool[7] e:f32[] a:f32[7]. let
                f:f32[7] = broadcast_in_dim e
                d:f32[7] = select_n c a f
              in (d,) }
          ] c -inf:f32[] a
          g:f32[] = reduce_max[axes=(0,)] d
          h:bool[7] = ne a a
          i:bool[] = reduce_and[axes=(0,)] h
          b:f32[] = jit[
            name=_where
            jaxpr={ lambda ; i:bool[] j:f32[] g:f32[]. let
                b:f32[] = select_n i g j
              in (b,) }
          ] i nan:f32[] g
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_nanmin'] = """\
{ lambda ; a:f32[3,4]. let
    b:f32[3,1] = jit[
      name=nanmin
      jaxpr={ lambda ; a:f32[3,4]. let
          c:bool[3,4] = ne a a
          d:f32[3,4] = jit[
            name=_where
            jaxpr={ lambda ; c:bool[3,4] e:f32[] a:f32[3,4]. let
                f:f32[3,4] = broadcast_in_dim e
                d:f32[3,4] = select_n c a f
              in (d,) }
          ] c inf:f32[] a
          g:f32[3] = reduce_min[axes=(1,)] d
          h:f32[3,1] = broadcast_in_dim[broadcast_dimensions=(0,)] g
          i:bool[3,4] = ne a a
          j:bool[3] = reduce_and[axes=(1,)] i
          k:bool[3,1] = broadcast_in_dim[broadcast_dimensions=(0,)] j
          b:f32[3,1] = jit[
            name=_where
            jaxpr={ lambda ; k:bool[3,1] l:f32[] h:f32[3,1]. let
                m:f32[3,1] = broadcast_in_dim l
                b:f32[3,1] = select_n k h m
              in (b,) }
          ] k nan:f32[] h
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_nanmean'] = """\
{ lambda ; a:f32[7]. let
    b:f32[] = jit[
      name=nanmean
      jaxpr={ lambda ; a:f32[7]. let
          c:bool[7] = ne a a
          d:bool[7] = not c
          e:i32[7] = convert_element_type[new_dtype=int32 weak_type=False] d
          f:f32[7] = convert_element_type[new_dtype=float32 weak_type=False] e
          g:f32[] = reduce_sum[axes=(0,) out_sharding=None] f
          h:f32[] = jit[
            name=nansum
            jaxpr={ lambda ; a:f32[7]. let
                i:bool[7] = ne a a
                j:f32[7] = jit[
                  name=_where
                  jaxpr={ lambda ; i:bool[7] k:f32[] a:f32[7]. let
                      l:f32[7] = broadcast_in_dim k
                      j:f32[7] = select_n i a l
                    in (j,) }
                ] i 0.0:f32[] a
                h:f32[] = reduce_sum[axes=(0,) out_sharding=None] j
              in (h,) }
          ] a
          b:f32[] = div h g
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_nanmean_axis'] = """\
{ lambda ; a:f32[3,4]. let
    b:f32[1,4] = jit[
      name=nanmean
      jaxpr={ lambda ; a:f32[3,4]. let
          c:bool[3,4] = ne a a
          d:bool[3,4] = not c
          e:i32[3,4] = convert_element_type[new_dtype=int32 weak_type=False] d
          f:f32[3,4] = convert_element_type[new_dtype=float32 weak_type=False] e
          g:f32[4] = reduce_sum[axes=(0,) out_sharding=None] f
          h:f32[1,4] = broadcast_in_dim[broadcast_dimensions=(1,)] g
          i:f32[1,4] = jit[
            name=nansum
            jaxpr={ lambda ; a:f32[3,4]. let
                j:bool[3,4] = ne a a
                k:f32[3,4] = jit[
                  name=_where
                  jaxpr={ lambda ; j:bool[3,4] l:f32[] a:f32[3,4]. let
                      m:f32[3,4] = broadcast_in_dim l
                      k:f32[3,4] = select_n j a m
                    in (k,) }
                ] j 0.0:f32[] a
                n:f32[4] = reduce_sum[axes=(0,) out_sharding=None] k
                i:f32[1,4] = broadcast_in_dim[broadcast_dimensions=(1,)] n
              in (i,) }
          ] a
          b:f32[1,4] = div i h
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_rot90'] = """\
{ lambda ; a:f32[3,4]. let
    b:f32[4,3] = jit[
      name=rot90
      jaxpr={ lambda ; a:f32[3,4]. let
          c:f32[3,4] = jit[
            name=_flip
            jaxpr={ lambda ; a:f32[3,4]. let
                c:f32[3,4] = rev[dimensions=(1,)] a
              in (c,) }
          ] a
          b:f32[4,3] = transpose[permutation=(1, 0)] c
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_rot90_2'] = """\
{ lambda ; a:f32[3,4]. let
    b:f32[3,4] = jit[
      name=rot90
      jaxpr={ lambda ; a:f32[3,4]. let
          c:f32[3,4] = jit[
            name=_flip
            jaxpr={ lambda ; a:f32[3,4]. let
                c:f32[3,4] = rev[dimensions=(0,)] a
              in (c,) }
          ] a
          b:f32[3,4] = jit[
            name=_flip
            jaxpr={ lambda ; c:f32[3,4]. let
                b:f32[3,4] = rev[dimensions=(1,)] c
              in (b,) }
          ] c
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_rot90_3_axes'] = """\
{ lambda ; a:f32[2,3,4]. let
    b:f32[2,4,3] = jit[
      name=rot90
      jaxpr={ lambda ; a:f32[2,3,4]. let
          c:f32[2,4,3] = transpose[permutation=(0, 2, 1)] a
          b:f32[2,4,3] = jit[
            name=_flip
            jaxpr={ lambda ; c:f32[2,4,3]. let
                b:f32[2,4,3] = rev[dimensions=(2,)] c
              in (b,) }
          ] c
        in (b,) }
    ] a
  in (b,) }"""

EXPECTED['jnp_heaviside'] = """\
let _where = { lambda ; a:bool[7] b:f32[] c:f32[7]. let
    d:f32[7] = broadcast_in_dim b
    e:f32[7] = select_n a c d
  in (e,) } in
{ lambda ; f:f32[7]. let
    g:f32[7] = jit[
      name=heaviside
      jaxpr={ lambda ; f:f32[7] h:f32[]. let
          i:f32[] = convert_element_type[new_dtype=float32 weak_type=False] h
          j:bool[7] = lt f 0.0:f32[]
          k:bool[7] = gt f 0.0:f32[]
          l:bool[7] = ne f f
          m:f32[7] = jit[
            name=_where
            jaxpr={ lambda ; l:bool[7] f:f32[7] i:f32[]. let
                n:f32[7] = broadcast_in_dim i
                m:f32[7] = select_n l n f
              in (m,) }
          ] l f i
          o:f32[7] = jit[name=_where jaxpr=_where] k 1.0:f32[] m
          g:f32[7] = jit[name=_where jaxpr=_where] j 0.0:f32[] o
        in (g,) }
    ] f 0.5:f32[]
  in (g,) }"""

EXPECTED['jnp_heaviside_bcast'] = """\
let _where = { lambda ; a:bool[3,4] b:f32[] c:f32[3,4]. let
    d:f32[3,4] = broadcast_in_dim b
    e:f32[3,4] = select_n a c d
  in (e,) } in
{ lambda ; f:f32[3,4] g:f32[4]. let
    h:f32[3,4] = jit[
      name=heaviside
      jaxpr={ lambda ; f:f32[3,4] g:f32[4]. let
          i:bool[3,4] = lt f 0.0:f32[]
          j:bool[3,4] = gt f 0.0:f32[]
          k:bool[3,4] = ne f f
          l:f32[3,4] = jit[
            name=_where
            jaxpr={ lambda ; k:bool[3,4] f:f32[3,4] g:f32[4]. let
                m:f32[3,4] = broadcast_in_dim[broadcast_dimensions=(1,)] g
                l:f32[3,4] = select_n k m f
              in (l,) }
          ] k f g
          n:f32[3,4] = jit[name=_where jaxpr=_where] j 1.0:f32[] l
          h:f32[3,4] = jit[name=_where jaxpr=_where] i 0.0:f32[] n
        in (h,) }
    ] f g
  in (h,) }"""

EXPECTED['jnp_floor_divide'] = """\
let floor_divide = { lambda ; a:f32[7] b:f32[7]. let
    c:f32[7] = rem a b
    d:bool[7] = eq b 0.0:f32[]
    e:f32[7] = sub a c
    f:f32[7] = jit[
      name=_where
      jaxpr={ lambda ; d:bool[7] a:f32[7] e:f32[7]. let
          f:f32[7] = select_n d e a
        in (f,) }
    ] d a e
    g:f32[7] = div f b
    h:bool[7] = ne c 0.0:f32[]
    i:f32[7] = sign b
    j:f32[7] = sign c
    k:bool[7] = ne i j
    l:bool[7] = and h k
    m:f32[7] = add c b
    n:f32[7] = select_n l c m
    o:f32[7] = sub g 1.0:f32[]
    p:f32[7] = select_n l g o
    q:f32[7] = round[rounding_method=0] p
  in (q,) } in
{ lambda ; r:f32[7] s:f32[7]. let
    t:f32[7] = jit[name=floor_divide jaxpr=floor_divide] r s
  in (t,) }"""

EXPECTED['jnp_floor_divide_int'] = """\
{ lambda ; a:i32[8]. let
    b:i32[8] = jit[
      name=floor_divide
      jaxpr={ lambda ; a:i32[8] c:i32[]. let
          d:i32[] = convert_element_type[new_dtype=int32 weak_type=False] c
          e:i32[8] = div a d
          f:i32[8] = sign a
          g:i32[] = sign d
          h:bool[8] = ne f g
          i:i32[8] = rem a d
          j:bool[8] = ne i 0:i32[]
          k:bool[8] = and h j
          l:i32[8] = sub e 1:i32[]
          b:i32[8] = jit[
            name=_where
            jaxpr={ lambda ; k:bool[8] l:i32[8] e:i32[8]. let
                b:i32[8] = select_n k e l
              in (b,) }
          ] k l e
        in (b,) }
    ] a 3:i32[]
  in (b,) }"""

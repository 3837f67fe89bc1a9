"""Ember's thread pool: a process-wide native pool whose caller never waits for a late thread.

Input: llvmlite's binding module, once LLVM is initialized (`install(llvm)`, called by
`threads.register_symbols` while `llvm_target.target()` builds the host target). Output: the
JIT linker knows
  void ember_parallel_for(void (*chunk)(ptr data, i64 begin, i64 end), ptr data,
                          i64 extent, i32 nthreads)
by name (kernels cached on disk reference it by name, so they stay valid in a new process),
and `stats()` reads the pool's counters. The pool's code is generated once per machine (~9
ms) and loaded from the disk cache in every process after (`_object`), at the first
`llvm_target.target()`.

Why not `GOMP_parallel`: an OpenMP region gives each thread one static slice and ends at a
barrier, so when another process keeps a core busy the caller waits for a worker the OS wakes
milliseconds late (a 65 us kernel took 8 ms). Here the calling thread does the work itself and
helpers only speed it up:
- [0, extent) is cut into C = min(extent, CHUNKS_PER_THREAD * T) chunks, chunk i being
  [i q + min(i, r), (i + 1) q + min(i + 1, r)) with q, r = divmod(extent, C). Each index is
  computed by exactly one call of the same chunk function, so which thread runs which chunk,
  and how many chunks there are, never changes a result (kernels compute an element the same
  way whatever their span: emitter.py).
- one 64-bit atomic word holds (generation: 32 bits, C: 16 bits, next unclaimed chunk: 16
  bits). A region writes its descriptor (chunk, data, extent, helpers) and resets the done
  counter, then publishes (generation + 1, C, 0). Everyone, caller included, claims chunk i
  by a cmpxchg of (g, C, i) -> (g, C, i + 1), so a claim names its region: a worker that read
  an old word fails its cmpxchg and can never run an old region's function on a new region's
  chunk. A successful claim keeps the region open until that chunk's done increment, so the
  descriptor read after the claim is the region's own.
- the caller claims chunks until none are left, then waits (pause, then sched_yield) only for
  chunks a worker already claimed, i.e. is running, and returns when done == C. A worker that
  wakes late finds the word exhausted and goes back to waiting.
- workers (nthreads - 1 of them, at most MAX_THREADS - 1, started lazily by pthread_create
  from native code on the first region that needs them) poll the word for SPIN_NS after
  their last chunk (with `pause` for YIELD_NS, then with sched_yield, so a caller or another
  process sharing the core gets it back), then sleep on a futex word of their own. Sleep is
  Dekker-style with sequentially consistent accesses: the worker stores sleeping = 1 then
  re-reads the state word; the caller stores the state word then reads sleeping, so at
  least one of them sees the other. A caller that sees a sleeper sets its wake word to 1
  and calls FUTEX_WAKE only if it was 0 (at most one syscall per sleeping helper per
  region, none for spinning ones).
- a worker that loses its core while holding a chunk (the OS preempts it for another
  process) makes the caller wait for that chunk: a claimed chunk cannot be taken back, since
  running it twice would be wrong for in-place kernels. The caller counts such a stall (its
  wait outlasted twice its own mean chunk time + STALL_NS) and runs regions alone for a
  while: max(the wait, 2 x the previous backoff), at most MAX_BACKOFF_NS; every region with
  helpers that does not stall halves the backoff. Time alone stays within a small factor of
  the time stalls cost, and on a machine whose other cores are busy the pool degrades to
  about one thread's speed instead of paying a preemption per region.
- regions are serialized by a try-lock: a second caller (another Python thread, or a chunk
  that itself calls ember_parallel_for) that finds the pool busy runs its whole extent alone,
  so nothing ever waits on the lock and nothing can deadlock. nthreads <= 1 or extent <= 1
  also runs inline on the calling thread.
- fork: the child has no workers. `os.register_at_fork` resets the pool in the child (no
  workers started, lock free, no backoff, a new generation with no chunks); workers restart
  lazily.
Knobs (for measurements and tests): env EMBER_POOL_SPIN_US, `set_spin_us`,
`set_max_backoff_us`; `stats()` and `asleep()` read the pool's state.
Invariants: Linux on x86-64 or aarch64 only (futex and sched_yield syscall numbers, the pause
instruction); elsewhere `install` returns False and every kernel runs on the calling thread.
The pool's code is never freed (its engine is detached): sleeping workers live in it until
the process exits. Generations wrap modulo 2^32: a worker would have to stall between its
read and its cmpxchg for exactly 2^32 regions to be fooled.
"""

from __future__ import annotations

import ctypes
import os
import threading
from typing import Any

from ember.config import config

SYMBOL = "ember_parallel_for"
MAX_THREADS = 256  # caller + 255 workers; C <= 4 * 256 fits the 16-bit chunk fields
CHUNKS_PER_THREAD = 4  # a few per thread: late or slow threads leave work to the others


def _spin_ns() -> int:
    """How long an idle worker polls before it sleeps: env EMBER_POOL_SPIN_US, default 50."""
    try:
        return max(0, int(float(config.ember_pool_spin_us) * 1000))
    except ValueError:
        return 50_000


SPIN_NS = _spin_ns()
YIELD_NS = 10_000  # an idle worker polls with `pause` this long, then with sched_yield
STALL_NS = 20_000  # slack before a caller decides a worker's chunk stalled (see `finish`)
MAX_BACKOFF_NS = 100_000_000  # the longest stretch run alone after repeated stalls
WAIT_SPINS_BEFORE_YIELD = 2048  # caller: pause this often, then sched_yield (a preempted
# claimer may be waiting for this very core)

# Linux syscall numbers and the spin-wait hint (declaration, call), per architecture
_ARCH = {
    "x86_64": {"futex": 202, "sched_yield": 24,
               "pause": ("declare void @llvm.x86.sse2.pause()",
                         "call void @llvm.x86.sse2.pause()")},
    "aarch64": {"futex": 98, "sched_yield": 124,  # hint #1 is `yield`
                "pause": ("declare void @llvm.aarch64.hint(i32)",
                          "call void @llvm.aarch64.hint(i32 1)")},
}
FUTEX_WAIT_PRIVATE = 128  # FUTEX_WAIT (0) | FUTEX_PRIVATE_FLAG (128)
FUTEX_WAKE_PRIVATE = 129  # FUTEX_WAKE (1) | FUTEX_PRIVATE_FLAG
CLOCK_MONOTONIC = 1
_STATS = ("regions", "busy_inline", "wakes", "caller_chunks", "stalls", "backoff_inline")

_LOCK = threading.Lock()
_INSTALLED: dict[str, Any] = {}  # "engine", "after_fork", addresses of globals


def arch_of(triple: str) -> str | None:
    """The `_ARCH` key of an LLVM triple, or None where the pool cannot run."""
    if "linux" not in triple:
        return None
    arch = triple.split("-", 1)[0]
    return {"x86_64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}.get(arch)


def pool_ir(arch: str) -> str:
    """LLVM IR text of the pool for one architecture (see the module docstring)."""
    a = _ARCH[arch]
    workers = MAX_THREADS - 1
    slots = f"[{workers} x %slot]"
    desc = "{ ptr, ptr, i64, i32 }"
    return f"""
; a worker's line: futex wake word, sleeping flag, chunks it ran (padding: no false sharing)
%slot = type {{ i32, i32, i64, [48 x i8] }}

@ember_pool_state = internal global i64 0, align 64   ; generation<<32 | C<<16 | next
@ember_pool_done = internal global i64 0, align 64    ; chunks of this region finished
@ember_pool_desc = internal global {desc} zeroinitializer, align 64 ; chunk, data, extent, helpers
@ember_pool_busy = internal global i32 0, align 64    ; the region lock
@ember_pool_started = global i32 0, align 64          ; workers running (lock holder writes)
@ember_pool_cap = internal global i32 {workers}, align 4  ; lowered when pthread_create fails
@ember_pool_tids = internal global [{workers} x i64] zeroinitializer, align 8
@ember_pool_slots = global {slots} zeroinitializer, align 64
@ember_pool_stats = global [{len(_STATS)} x i64] zeroinitializer, align 64
@ember_pool_spin_ns = global i64 {SPIN_NS}, align 8
@ember_pool_yield_ns = global i64 {YIELD_NS}, align 8
@ember_pool_wait_spins = global i64 {WAIT_SPINS_BEFORE_YIELD}, align 8
@ember_pool_backoff = global i64 0, align 8  ; ns to run alone after the next stall / 2
@ember_pool_alone = global i64 0, align 8    ; run alone until this CLOCK_MONOTONIC ns (0: no)
@ember_pool_max_backoff = global i64 {MAX_BACKOFF_NS}, align 8

declare i64 @syscall(i64, ...)
declare i32 @pthread_create(ptr, ptr, ptr, ptr)
declare i32 @clock_gettime(i32, ptr)
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)

{a['pause'][0]}

; the spin-wait hint (an intrinsic: inline asm would need LLVM's asm parser initialized)
define internal void @pool.pause() nounwind alwaysinline {{
  {a['pause'][1]}
  ret void
}}

define internal i64 @pool.now() nounwind {{
  %ts = alloca {{ i64, i64 }}, align 8
  %rc = call i32 @clock_gettime(i32 {CLOCK_MONOTONIC}, ptr %ts)
  %sec = load i64, ptr %ts, align 8
  %nsp = getelementptr inbounds {{ i64, i64 }}, ptr %ts, i32 0, i32 1
  %nsec = load i64, ptr %nsp, align 8
  %ns = mul i64 %sec, 1000000000
  %t = add i64 %ns, %nsec
  ret i64 %t
}}

define internal void @pool.bump(i64 %k, i64 %by) nounwind {{
  %p = getelementptr inbounds [{len(_STATS)} x i64], ptr @ember_pool_stats, i64 0, i64 %k
  %old = atomicrmw add ptr %p, i64 %by monotonic, align 8
  ret void
}}

; Run chunk %i of %n of the region whose descriptor the claim of %i made ours:
; q, r = divmod(extent, n); chunk i = [i q + min(i, r), +q + (i < r)).
define internal void @pool.run(i64 %i, i64 %n) nounwind {{
  %fnp = getelementptr inbounds {desc}, ptr @ember_pool_desc, i32 0, i32 0
  %datap = getelementptr inbounds {desc}, ptr @ember_pool_desc, i32 0, i32 1
  %extp = getelementptr inbounds {desc}, ptr @ember_pool_desc, i32 0, i32 2
  %fn = load atomic ptr, ptr %fnp monotonic, align 8
  %data = load atomic ptr, ptr %datap monotonic, align 8
  %extent = load atomic i64, ptr %extp monotonic, align 8
  %q = udiv i64 %extent, %n
  %r = urem i64 %extent, %n
  %low = icmp ult i64 %i, %r
  %m = select i1 %low, i64 %i, i64 %r
  %iq = mul i64 %i, %q
  %begin = add i64 %iq, %m
  %extra = zext i1 %low to i64
  %len = add i64 %q, %extra
  %end = add i64 %begin, %len
  call void %fn(ptr %data, i64 %begin, i64 %end)
  ; release: whoever sees done == C sees this chunk's stores
  %old = atomicrmw add ptr @ember_pool_done, i64 1 release, align 8
  ret void
}}

; Claim and run chunks while the state word has unclaimed ones; returns how many ran.
define internal i64 @pool.drain() nounwind {{
entry:
  %s0 = load atomic i64, ptr @ember_pool_state acquire, align 8
  br label %loop
loop:
  %s = phi i64 [ %s0, %entry ], [ %seen, %claim ], [ %s2, %run ]
  %ran = phi i64 [ 0, %entry ], [ %ran, %claim ], [ %ran1, %run ]
  %i = and i64 %s, 65535
  %sn = lshr i64 %s, 16
  %n = and i64 %sn, 65535
  %more = icmp ult i64 %i, %n
  br i1 %more, label %claim, label %out
claim:
  %s1 = add i64 %s, 1
  %cx = cmpxchg ptr @ember_pool_state, i64 %s, i64 %s1 acquire acquire, align 8
  %seen = extractvalue {{ i64, i1 }} %cx, 0
  %ok = extractvalue {{ i64, i1 }} %cx, 1
  br i1 %ok, label %run, label %loop
run:
  call void @pool.run(i64 %i, i64 %n)
  %ran1 = add i64 %ran, 1
  %s2 = load atomic i64, ptr @ember_pool_state acquire, align 8
  br label %loop
out:
  ret i64 %ran
}}

; Does state word %s hold a chunk worker %w may claim?
define internal i1 @pool.has_work(i64 %s, i32 %w) nounwind {{
  %i = and i64 %s, 65535
  %sn = lshr i64 %s, 16
  %n = and i64 %sn, 65535
  %more = icmp ult i64 %i, %n
  %hp = getelementptr inbounds {desc}, ptr @ember_pool_desc, i32 0, i32 3
  %h = load atomic i32, ptr %hp monotonic, align 4
  %mine = icmp ult i32 %w, %h
  %both = and i1 %more, %mine
  ret i1 %both
}}

; Worker %arg (its index): poll for SPIN_NS after its last chunk, then sleep on its futex.
define internal ptr @pool.worker(ptr %arg) nounwind {{
entry:
  %w64 = ptrtoint ptr %arg to i64
  %w = trunc i64 %w64 to i32
  %wake = getelementptr inbounds {slots}, ptr @ember_pool_slots, i64 0, i64 %w64, i32 0
  %sleeping = getelementptr inbounds {slots}, ptr @ember_pool_slots, i64 0, i64 %w64, i32 1
  %count = getelementptr inbounds {slots}, ptr @ember_pool_slots, i64 0, i64 %w64, i32 2
  br label %awake
awake:
  %t0 = call i64 @pool.now()
  %spin = load atomic i64, ptr @ember_pool_spin_ns monotonic, align 8
  %deadline = add i64 %t0, %spin
  %yield_ns = load atomic i64, ptr @ember_pool_yield_ns monotonic, align 8
  br label %poll
poll:
  %k = phi i64 [ 0, %awake ], [ %k1, %idle ], [ %k1, %polite ], [ %k1, %yield ]
  %s = load atomic i64, ptr @ember_pool_state acquire, align 8
  %go = call i1 @pool.has_work(i64 %s, i32 %w)
  br i1 %go, label %work, label %idle
work:
  %ran = call i64 @pool.drain()
  %c0 = load atomic i64, ptr %count monotonic, align 8
  %c1 = add i64 %c0, %ran
  store atomic i64 %c1, ptr %count monotonic, align 8
  br label %awake
idle:
  call void @pool.pause()
  %k1 = add i64 %k, 1
  %k15 = and i64 %k1, 15
  %tick = icmp eq i64 %k15, 0
  br i1 %tick, label %clock, label %poll
clock:
  %now = call i64 @pool.now()
  %late = icmp sgt i64 %now, %deadline
  br i1 %late, label %sleep, label %polite
polite:
  ; past the first microseconds, give the core away between polls: a caller preempted by
  ; this worker's wake-up on the caller's own core gets it back at once
  %idle_ns = sub i64 %now, %t0
  %long = icmp sgt i64 %idle_ns, %yield_ns
  br i1 %long, label %yield, label %poll
yield:
  %ry = call i64 (i64, ...) @syscall(i64 {a['sched_yield']})
  br label %poll
sleep:
  store atomic i32 1, ptr %sleeping seq_cst, align 4
  %s3 = load atomic i64, ptr @ember_pool_state seq_cst, align 8
  %go3 = call i1 @pool.has_work(i64 %s3, i32 %w)
  br i1 %go3, label %unsleep, label %wait
unsleep:
  store atomic i32 0, ptr %sleeping seq_cst, align 4
  br label %work
wait:
  ; returns at once if a caller already set the wake word (EAGAIN), or on a signal
  %rc = call i64 (i64, ...) @syscall(i64 {a['futex']}, ptr %wake, i64 {FUTEX_WAIT_PRIVATE},
                                     i64 0, ptr null)
  ; (sleeping first: a worker seen asleep with a clear wake word really needs a wake)
  store atomic i32 0, ptr %sleeping seq_cst, align 4
  store atomic i32 0, ptr %wake seq_cst, align 4
  br label %awake
}}

; Make sure %want workers run (called under the region lock); returns how many do.
define internal i32 @pool.start(i32 %want0) nounwind {{
entry:
  %cap = load atomic i32, ptr @ember_pool_cap monotonic, align 4
  %over = icmp ugt i32 %want0, %cap
  %want = select i1 %over, i32 %cap, i32 %want0
  %have0 = load atomic i32, ptr @ember_pool_started monotonic, align 4
  br label %check
check:
  %have = phi i32 [ %have0, %entry ], [ %have1, %created ]
  %enough = icmp uge i32 %have, %want
  br i1 %enough, label %out, label %create
create:
  %h64 = zext i32 %have to i64
  %tid = getelementptr inbounds [{workers} x i64], ptr @ember_pool_tids, i64 0, i64 %h64
  %arg = inttoptr i64 %h64 to ptr
  %rc = call i32 @pthread_create(ptr %tid, ptr null, ptr @pool.worker, ptr %arg)
  %ok = icmp eq i32 %rc, 0
  br i1 %ok, label %created, label %failed
created:
  %have1 = add i32 %have, 1
  store atomic i32 %have1, ptr @ember_pool_started monotonic, align 4
  br label %check
failed:
  store atomic i32 %have, ptr @ember_pool_cap monotonic, align 4  ; stop trying
  br label %out
out:
  %got = phi i32 [ %have, %check ], [ %have, %failed ]
  %less = icmp ult i32 %got, %want
  %res = select i1 %less, i32 %got, i32 %want
  ret i32 %res
}}

define void @{SYMBOL}(ptr %fn, ptr %data, i64 %extent, i32 %nthreads) nounwind {{
entry:
  %few = icmp slt i32 %nthreads, 2
  %small = icmp slt i64 %extent, 2
  %alone = or i1 %few, %small
  br i1 %alone, label %inline, label %lock
inline:
  call void %fn(ptr %data, i64 0, i64 %extent)
  ret void
lock:
  %lk = cmpxchg ptr @ember_pool_busy, i32 0, i32 1 acquire monotonic, align 4
  %got = extractvalue {{ i32, i1 }} %lk, 1
  br i1 %got, label %start, label %contended
contended:
  call void @pool.bump(i64 1, i64 1)
  br label %inline
start:
  ; backing off after a stall: regions run alone until the clock passes `alone`
  %until = load atomic i64, ptr @ember_pool_alone monotonic, align 8
  %backing_off = icmp ne i64 %until, 0
  br i1 %backing_off, label %check_backoff, label %helpers
check_backoff:
  %tb = call i64 @pool.now()
  %still = icmp slt i64 %tb, %until
  br i1 %still, label %backoff, label %backoff_over
backoff_over:
  store atomic i64 0, ptr @ember_pool_alone monotonic, align 8
  br label %helpers
backoff:
  call void @pool.bump(i64 5, i64 1)
  br label %unlock_inline
helpers:
  %want0 = sub i32 %nthreads, 1
  %big = icmp ugt i32 %want0, {workers}
  %want = select i1 %big, i32 {workers}, i32 %want0
  %h = call i32 @pool.start(i32 %want)
  %none = icmp eq i32 %h, 0
  br i1 %none, label %unlock_inline, label %publish
unlock_inline:
  store atomic i32 0, ptr @ember_pool_busy release, align 4
  br label %inline
publish:
  %h64 = zext i32 %h to i64
  %t = add i64 %h64, 1
  %c4 = mul i64 %t, {CHUNKS_PER_THREAD}
  %fewer = icmp ult i64 %extent, %c4
  %c = select i1 %fewer, i64 %extent, i64 %c4
  %fnp = getelementptr inbounds {desc}, ptr @ember_pool_desc, i32 0, i32 0
  %datap = getelementptr inbounds {desc}, ptr @ember_pool_desc, i32 0, i32 1
  %extp = getelementptr inbounds {desc}, ptr @ember_pool_desc, i32 0, i32 2
  %hp = getelementptr inbounds {desc}, ptr @ember_pool_desc, i32 0, i32 3
  store atomic ptr %fn, ptr %fnp monotonic, align 8
  store atomic ptr %data, ptr %datap monotonic, align 8
  store atomic i64 %extent, ptr %extp monotonic, align 8
  store atomic i32 %h, ptr %hp monotonic, align 4
  store atomic i64 0, ptr @ember_pool_done monotonic, align 8
  ; only the lock holder changes the generation
  %old = load atomic i64, ptr @ember_pool_state monotonic, align 8
  %g = lshr i64 %old, 32
  %g1 = add i64 %g, 1
  %gs = shl i64 %g1, 32
  %cs = shl i64 %c, 16
  %new = or i64 %gs, %cs
  ; seq_cst: releases the descriptor, and orders against the sleeping flags read next
  store atomic i64 %new, ptr @ember_pool_state seq_cst, align 8
  call void @pool.bump(i64 0, i64 1)
  br label %wake_loop
wake_loop:
  %wi = phi i64 [ 0, %publish ], [ %wi1, %wake_next ]
  %sl = getelementptr inbounds {slots}, ptr @ember_pool_slots, i64 0, i64 %wi, i32 1
  %asleep = load atomic i32, ptr %sl seq_cst, align 4
  %is_asleep = icmp ne i32 %asleep, 0
  br i1 %is_asleep, label %wake_kick, label %wake_next
wake_kick:
  %wk = getelementptr inbounds {slots}, ptr @ember_pool_slots, i64 0, i64 %wi, i32 0
  %prev = atomicrmw xchg ptr %wk, i32 1 seq_cst, align 4
  %first = icmp eq i32 %prev, 0
  br i1 %first, label %wake_call, label %wake_next
wake_call:
  %rc = call i64 (i64, ...) @syscall(i64 {a['futex']}, ptr %wk, i64 {FUTEX_WAKE_PRIVATE}, i64 1)
  call void @pool.bump(i64 2, i64 1)
  br label %wake_next
wake_next:
  %wi1 = add i64 %wi, 1
  %woke_all = icmp eq i64 %wi1, %h64
  br i1 %woke_all, label %work, label %wake_loop
work:
  %tw0 = call i64 @pool.now()
  %mine = call i64 @pool.drain()
  %tw1 = call i64 @pool.now()
  call void @pool.bump(i64 3, i64 %mine)
  ; patience: a running worker's last chunk started at most about when the caller's last
  ; did, so it ends within ~2 of the caller's mean chunk times (+ STALL_NS of slack);
  ; waiting longer means the worker lost its core while holding a chunk (a stall)
  %own = sub i64 %tw1, %tw0
  %some = icmp ugt i64 %mine, 0
  %mine1 = select i1 %some, i64 %mine, i64 1
  %per = udiv i64 %own, %mine1
  %per2 = shl i64 %per, 1
  %patience = add i64 %per2, {STALL_NS}
  %stall_at = add i64 %tw1, %patience
  br label %wait
wait:
  %spins = phi i64 [ 0, %work ], [ %spins1, %pause ], [ %spins1, %yield ]
  %stalled = phi i1 [ false, %work ], [ %stalled1, %pause ], [ %stalled1, %yield ]
  %d = load atomic i64, ptr @ember_pool_done acquire, align 8
  %all = icmp eq i64 %d, %c
  br i1 %all, label %finish, label %more
more:
  %spins1 = add i64 %spins, 1
  %s63 = and i64 %spins1, 63
  %tick = icmp eq i64 %s63, 0
  br i1 %tick, label %clock, label %spin
clock:
  %now = call i64 @pool.now()
  %late = icmp sgt i64 %now, %stall_at
  br label %spin
spin:
  %late1 = phi i1 [ false, %more ], [ %late, %clock ]
  %stalled1 = or i1 %stalled, %late1
  %wait_spins = load atomic i64, ptr @ember_pool_wait_spins monotonic, align 8
  %long = icmp ugt i64 %spins1, %wait_spins
  br i1 %long, label %yield, label %pause
pause:
  call void @pool.pause()
  br label %wait
yield:
  %ry = call i64 (i64, ...) @syscall(i64 {a['sched_yield']})
  br label %wait
finish:
  %b = load atomic i64, ptr @ember_pool_backoff monotonic, align 8
  br i1 %stalled, label %stall, label %smooth
smooth:
  ; a region with helpers that did not stall halves the backoff
  %halved = lshr i64 %b, 1
  store atomic i64 %halved, ptr @ember_pool_backoff monotonic, align 8
  br label %unlock
stall:
  ; run alone for max(2 x the last backoff, this wait) ns, at most MAX_BACKOFF_NS: time
  ; alone stays within a small factor of the time stalls cost, and on a machine whose other
  ; cores are busy the pool degrades to one thread's speed
  %tend = call i64 @pool.now()
  %waited = sub i64 %tend, %tw1
  %b2 = shl i64 %b, 1
  %more_b = icmp ugt i64 %b2, %waited
  %grown = select i1 %more_b, i64 %b2, i64 %waited
  %most = load atomic i64, ptr @ember_pool_max_backoff monotonic, align 8
  %capped = icmp ugt i64 %grown, %most
  %nb = select i1 %capped, i64 %most, i64 %grown
  store atomic i64 %nb, ptr @ember_pool_backoff monotonic, align 8
  %alone_until = add i64 %tend, %nb
  store atomic i64 %alone_until, ptr @ember_pool_alone monotonic, align 8
  call void @pool.bump(i64 4, i64 1)
  br label %unlock
unlock:
  store atomic i32 0, ptr @ember_pool_busy release, align 4
  ret void
}}

; In a fork's child: no worker exists and no region runs.
define void @ember_pool_after_fork() nounwind {{
  call void @llvm.memset.p0.i64(ptr @ember_pool_slots, i8 0, i64 {64 * workers}, i1 false)
  call void @llvm.memset.p0.i64(ptr @ember_pool_stats, i8 0, i64 {8 * len(_STATS)}, i1 false)
  store atomic i32 0, ptr @ember_pool_started monotonic, align 4
  store atomic i32 {workers}, ptr @ember_pool_cap monotonic, align 4
  store atomic i64 0, ptr @ember_pool_done monotonic, align 8
  store atomic i64 0, ptr @ember_pool_backoff monotonic, align 8
  store atomic i64 0, ptr @ember_pool_alone monotonic, align 8
  %old = load atomic i64, ptr @ember_pool_state monotonic, align 8
  %g = lshr i64 %old, 32
  %g1 = add i64 %g, 1
  %gs = shl i64 %g1, 32
  store atomic i64 %gs, ptr @ember_pool_state seq_cst, align 8
  store atomic i32 0, ptr @ember_pool_busy release, align 4
  ret void
}}
"""


def install(llvm: Any) -> bool:
    """Compile the pool (once per process) and bind `ember_parallel_for` for the JIT
    linker; False where the pool cannot run here (then kernels must not call it)."""
    with _LOCK:
        if "engine" in _INSTALLED:
            _bind(llvm)
            return True
        arch = arch_of(llvm.get_process_triple())
        if arch is None:
            return False
        try:
            libc = ctypes.CDLL(None)
            for name in ("syscall", "pthread_create", "clock_gettime"):
                llvm.add_symbol(name, ctypes.cast(getattr(libc, name), ctypes.c_void_p).value)
        except (OSError, AttributeError):
            return False
        triple = llvm.get_process_triple()
        try:
            # -O0 code generation: ~9 ms (-O2: ~25 ms) for code whose speed is in its atomics
            # and syscalls, so the object code is disk-cached like a library's
            machine = llvm.Target.from_triple(triple).create_target_machine(
                opt=0, reloc="default", codemodel="jitdefault")
            obj = _object(llvm, machine, pool_ir(arch), triple)
            from ember.backends.cpu.jit.object_format import foreign_reason

            ref = llvm.ObjectFileRef.from_data(obj)
            if not ref or foreign_reason(obj) is not None:  # (never link what would crash:
                # a null reference is dereferenced, another machine's code is run)
                raise RuntimeError("the pool's object code is not this host's")
            engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), machine)
            engine.add_object_file(ref)
            engine.finalize_object()
        except RuntimeError:  # LLVM refused the pool: every kernel runs on its caller
            return False
        names = [SYMBOL, "ember_pool_after_fork"]
        _INSTALLED.update({n: engine.get_function_address(n) for n in names})
        for g in ("ember_pool_started", "ember_pool_slots", "ember_pool_stats",
                  "ember_pool_spin_ns", "ember_pool_yield_ns", "ember_pool_wait_spins",
                  "ember_pool_backoff", "ember_pool_alone", "ember_pool_max_backoff"):
            _INSTALLED[g] = engine.get_global_value_address(g)
        engine.detach()  # never freed: workers sleep inside this code until the process ends
        _INSTALLED["engine"] = engine
        after = ctypes.CFUNCTYPE(None)(_INSTALLED["ember_pool_after_fork"])
        _INSTALLED["after_fork"] = after
        os.register_at_fork(after_in_child=after)
        _bind(llvm)
        return True


def _object(llvm: Any, machine: Any, ir: str, triple: str) -> bytes:
    """The pool's object code: from the disk cache when it is on (keyed by the IR text, the
    triple, the LLVM version and Ember's source hash; ~1 ms instead of ~9 ms of code
    generation in every process), else generated now. No CPU name in the key: -O0 code for
    the generic target of this triple."""
    def build() -> bytes:
        mod = llvm.parse_assembly(ir)
        mod.triple = triple
        mod.verify()
        return bytes(machine.emit_object(mod))

    from ember.backends.cpu.jit import disk_cache

    version = ".".join(map(str, llvm.llvm_version_info))
    return disk_cache.cached_object(ir, "pool|O0", f"{triple}|llvm{version}",
                                    {"what": "thread pool"}, build)


def _bind(llvm: Any) -> None:
    llvm.add_symbol(SYMBOL, _INSTALLED[SYMBOL])


def installed() -> bool:
    return "engine" in _INSTALLED


def address() -> int:
    """Address of `ember_parallel_for` (the pool must be installed)."""
    return int(_INSTALLED[SYMBOL])


def set_spin_us(us: float, yield_after_us: float | None = None) -> None:
    """How long an idle worker polls before it sleeps, and after how long it polls with
    sched_yield rather than pause (microseconds)."""
    ctypes.c_int64.from_address(_INSTALLED["ember_pool_spin_ns"]).value = int(us * 1000)
    if yield_after_us is not None:
        ctypes.c_int64.from_address(_INSTALLED["ember_pool_yield_ns"]).value = int(
            yield_after_us * 1000)


def set_max_backoff_us(us: float) -> None:
    """How long at most regions run alone after stalls (0: never back off), and end any
    backoff under way. (Call it while no region runs.)"""
    ctypes.c_int64.from_address(_INSTALLED["ember_pool_max_backoff"]).value = max(
        0, int(us * 1000))
    ctypes.c_int64.from_address(_INSTALLED["ember_pool_backoff"]).value = 0
    ctypes.c_int64.from_address(_INSTALLED["ember_pool_alone"]).value = 0


def asleep() -> list[bool]:
    """Whether each started worker is asleep on its futex (or about to be) and no caller
    has woken it yet (its wake word is still 0)."""
    if not installed():
        return []
    n = ctypes.c_int32.from_address(_INSTALLED["ember_pool_started"]).value
    slots = (ctypes.c_int32 * (16 * (MAX_THREADS - 1))).from_address(
        _INSTALLED["ember_pool_slots"])
    return [bool(slots[16 * w + 1]) and not slots[16 * w] for w in range(n)]


def stats() -> dict[str, int]:
    """Counters since the process (or the fork's child) started: `regions` run by the pool,
    `busy_inline` calls that ran alone because another region held the pool, futex `wakes`,
    `caller_chunks` and `worker_chunks` run, and `workers` started."""
    if not installed():
        return {}
    raw = (ctypes.c_int64 * len(_STATS)).from_address(_INSTALLED["ember_pool_stats"])
    out = {k: int(v) for k, v in zip(_STATS, raw)}
    slots = (ctypes.c_int64 * (8 * (MAX_THREADS - 1))).from_address(
        _INSTALLED["ember_pool_slots"])
    out["worker_chunks"] = sum(int(slots[8 * w + 1]) for w in range(MAX_THREADS - 1))
    out["workers"] = ctypes.c_int32.from_address(_INSTALLED["ember_pool_started"]).value
    return out

"""The one place Ember imports mpi4py, on first use.

Input: nothing. Output: `load_mpi()`, the `mpi4py.MPI` module (importing it initializes
MPI: under `mpiexec` this process joins the job; run alone it becomes a job of one).
Invariant: nothing else in Ember imports mpi4py, so `import ember` and every program that
never calls `ember.distributed.initialize()` work without it; when it is missing the
error names the extra that installs it.
"""

from __future__ import annotations

from types import ModuleType

EXTRA_HINT = "pip install 'ember[mpi]'"


def load_mpi() -> ModuleType:
    """`mpi4py.MPI`, or an ImportError that says how to install it."""
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise ImportError(
            "ember.distributed joins processes through MPI, which needs the optional "
            f"packages mpi4py and mpich: {EXTRA_HINT} (or pip install mpi4py mpich; a "
            f"cluster's own MPI works too). Import failed: {e}") from e
    return MPI

"""`jax.distributed`'s place in Ember: processes joined into one set of devices.

Input: nothing at import (MPI is imported only when a process is joined). Output:
`initialize()`, `shutdown()` and `is_initialized()` (as jax.distributed; process_group.py),
the process topology every device query reads (`topology.current()`), and the
communicator the runtime's collectives use between processes (`MpiCommunicator`, with the
errors a failed or timed-out collective raises). Invariant: without `initialize()` the
topology is one process (index 0 of 1) with no communicator, and nothing here imports
mpi4py (mpi_import.py does, on first use).
"""

from ember._missing import module_getattr as _module_getattr
from ember.distributed.deadline import CollectiveError, CollectiveTimeoutError
from ember.distributed.mpi_communicator import MpiCommunicator
from ember.distributed.process_group import initialize, is_initialized, shutdown

__all__ = ["CollectiveError", "CollectiveTimeoutError", "MpiCommunicator", "initialize",
           "is_initialized", "shutdown"]

# A jax.distributed name Ember lacks: AttributeError saying it is not implemented yet.
__getattr__ = _module_getattr(__name__)

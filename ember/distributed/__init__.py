"""`jax.distributed`'s place in Ember: processes joined into one set of devices.

Input: nothing at import (MPI is imported only when a process is joined). Output: the
process topology every device query reads (`topology.current()`), and the communicator
the runtime's collectives use between processes. Invariant: without `initialize()` the
topology is one process (index 0 of 1) with no communicator, and nothing here imports
mpi4py.
"""

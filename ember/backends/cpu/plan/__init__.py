"""Planning: what runs in which order, and where every value lives (no LLVM here).

Input: an optimized, fused HLO module. Output: a `Schedule` (schedule.py): the kernels in
order, a buffer slot for every value (parameters, outputs, constants, temporaries), the
plans of native loops and conditionals; then scratch offsets for the temporaries
(scratch_plan.py over buffer_assignment.py's interval packing, with in_place.py's operands a
kernel may overwrite) and the `RuntimeSpec` (runtime_spec.py): the pointer table's layout,
the one thing the runtime and the disk cache need besides the object code.
"""

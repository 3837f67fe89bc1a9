"""Measuring compiled code: per-kernel times and the machine's ceilings.

Input: an HLO module, or nothing. Output: profile.py's `ProfiledExecutable`, which times each
top-level step of a schedule, and peak.py's FMA loop for the peak GFLOP/s. Used by
ember/explain's roofline and profile; never on the compile path.
"""

"""Whose source lines does an optimized module carry? (compile-cache hits across functions)

The test lives in ember/hlo/provenance.py, where the compile path (ember/compiler.py) finds
it without importing ember.explain; re-exported here for the reports that use it.
"""

from __future__ import annotations

from ember.hlo.provenance import LOCATION_KEYS, Location, carries_metadata_of, locations

__all__ = ["LOCATION_KEYS", "Location", "carries_metadata_of", "locations"]

"""Code generation tests write their disk cache entries to a temporary folder, never to the
user's cache (tests of the cache itself set EMBER_CACHE_DIR again)."""

from __future__ import annotations

import os
import tempfile

os.environ["EMBER_CACHE_DIR"] = tempfile.mkdtemp(prefix="ember-test-cache-")

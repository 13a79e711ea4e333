"""Moved to tinygrad_like/fast/pool.py (the fast path); this old import path works for one release, with a warning."""
import sys
import warnings

from tinygrad_like.fast import pool as _moved

warnings.warn("tinygrad_like.pool moved to tinygrad_like.fast.pool; the old path goes in the next release",
              DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _moved  # the very module: attributes set on it (tests, settings) reach the fast path

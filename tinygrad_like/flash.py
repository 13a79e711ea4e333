"""Moved to tinygrad_like/fast/flash.py (the fast path); this old import path works for one release, with a warning."""
import sys
import warnings

from tinygrad_like.fast import flash as _moved

warnings.warn("tinygrad_like.flash moved to tinygrad_like.fast.flash; the old path goes in the next release",
              DeprecationWarning, stacklevel=2)
sys.modules[__name__] = _moved  # the very module: attributes set on it (tests, settings) reach the fast path

"""Moved: the twin table is now the inverse, in tinygrad_like/dispatch.py (each fused op names the composite it
replaces). This old import path works for one release, with a warning."""
import warnings

from tinygrad_like.dispatch import can_rebuild, composite_of, is_fused, rebuild

warnings.warn("tinygrad_like.twins moved to tinygrad_like.dispatch (has_twin -> is_fused, composed_twin -> "
              "composite_of); the old path goes in the next release", DeprecationWarning, stacklevel=2)

has_twin = is_fused
composed_twin = composite_of

__all__ = ["can_rebuild", "composed_twin", "has_twin", "rebuild"]

"""The engine's exception types, so that `except` clauses written for PyTorch catch our errors too.

PyTorch raises IndexError for a dim out of range and RuntimeError for shapes that do not fit; this
engine used to raise ValueError for both. Each class derives from PyTorch's type AND from ValueError,
so code written for either keeps working: `except IndexError`, `except RuntimeError` and
`except ValueError` all catch them. The messages stay ours: the op, the shapes, what to do.
"""
from __future__ import annotations


class DimError(IndexError, ValueError):
    """A dim (axis) outside [-ndim, ndim): PyTorch's IndexError ("Dimension out of range")."""


class ShapeError(ValueError, RuntimeError):
    """Shapes that do not fit an op (broadcasting, matmul, cat, view, ...): PyTorch's RuntimeError."""


class NotInEngine(NotImplementedError, AttributeError):
    """A PyTorch name the tinygrad_like engine does not provide (a module's name or a Tensor's attribute):
    an AttributeError, so `hasattr` and `getattr(x, name, None)` answer False / None, and a
    NotImplementedError, which is what it means."""

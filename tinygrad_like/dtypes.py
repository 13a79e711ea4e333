"""PyTorch's type promotion: the dtype of `a ⊗ b` for tensors and Python numbers.

numpy's own rules would widen float32 to float64 as soon as an int64 array or a float64 number takes
part, which silently doubles memory and time. PyTorch's rules, which we follow:

- Categories bool < integer < floating. Operands of different categories give the higher category,
  in the dtype of the operand that brought it: int32 ⊗ float32 is float32, bool ⊗ int8 is int8.
- Within one category, the wider dtype wins (numpy's promote_types: int32 ⊗ int64 is int64).
- Priority: tensors with dimensions decide first; a 0-d tensor, then a Python number, only raises the
  category. float32 (n,) ⊗ float64 0-d is float32; int64 (n,) ⊗ float64 0-d is float64.
- A Python (or numpy) number acts as int64, float32 (the default float dtype) or bool, so
  `float32_tensor * 0.5` stays float32 and `int_tensor * 0.5` is float32.
"""
from __future__ import annotations

import numpy as np

BOOL, INT64, DEFAULT_FLOAT = np.dtype(bool), np.dtype(np.int64), np.dtype(np.float32)
_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2}


def as_dtype(dtype) -> np.dtype | None:
    """A dtype argument as numpy's dtype; None stays None (the data decides)."""
    return None if dtype is None else np.dtype(dtype)


def category(dtype: np.dtype) -> int:
    """0 bool, 1 integer, 2 floating."""
    try:
        return _CATEGORY[dtype.kind]
    except KeyError:
        raise TypeError(f"dtype {dtype} is not supported (bool, integers and floats are)") from None


def scalar_dtype(value) -> np.dtype:
    """The dtype a Python or numpy number takes part with: bool, int64 or float32."""
    if isinstance(value, (bool, np.bool_)):
        return BOOL
    if isinstance(value, (int, np.integer)):
        return INT64
    if isinstance(value, (float, np.floating)):
        return DEFAULT_FLOAT
    raise TypeError(f"cannot combine a tensor with a {type(value).__name__}")


def promote_types(a: np.dtype | None, b: np.dtype) -> np.dtype:
    """The higher category's dtype, or within one category the wider one (numpy would make
    int32 ⊗ float32 float64; PyTorch makes it float32)."""
    if a is None or a == b:
        return b
    ca, cb = category(a), category(b)
    if ca != cb:
        return a if ca > cb else b
    return np.promote_types(a, b)


def _combine(higher: np.dtype | None, lower: np.dtype | None) -> np.dtype | None:
    """The result of a higher-priority class of operands meeting a lower one (PyTorch's combine_categories)."""
    if higher is None:
        return lower
    if lower is None or category(lower) <= category(higher):
        return higher
    return lower


def result_type(*operands) -> np.dtype:
    """PyTorch's result_type for numpy arrays (tensors' data) and Python numbers."""
    dimensioned = zero_dim = number = None
    for x in operands:
        if isinstance(x, np.ndarray):
            if x.ndim:
                dimensioned = promote_types(dimensioned, x.dtype)
            else:
                zero_dim = promote_types(zero_dim, x.dtype)
        else:
            number = promote_types(number, scalar_dtype(x))
    return _combine(dimensioned, _combine(zero_dim, number))

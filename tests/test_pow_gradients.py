"""The gradients of x ** y where the textbook formulas meet 0·∞: equal to PyTorch's, entry for entry.

d/dx x^y = y·x^(y−1) is 0·0^(−1) = NaN at x = 0, y = 0 and d/dy x^y = x^y·log x is 0·(−∞) = NaN at
x = 0, y > 0; PyTorch defines both as 0 there (and keeps ±inf and NaN where the limit is one). Checked
on PyTorch itself, for a constant exponent, tensor exponents and a constant base.
"""
import numpy as np
import pytest

from tinygrad_like import Tensor

torch = pytest.importorskip("torch")

POW_CASES = [
    ("x**0", lambda x, y: x ** 0, [-2.0, 0.0, 3.0], None),
    ("x**0.0", lambda x, y: x ** 0.0, [-2.0, 0.0, 3.0], None),
    ("x**y at y=0", lambda x, y: x ** y, [0.0, 0.0, 2.0], [0.0, 0.0, 0.0]),
    ("0**y", lambda x, y: x ** y, [0.0] * 6, [2.0, 1.0, 0.5, 0.0, -1.0, -0.5]),
    ("x**y", lambda x, y: x ** y, [0.5, 2.0, 0.0], [3.0, -1.0, 2.0]),
    ("0.0**y", lambda x, y: 0.0 ** y, None, [2.0, 1.0, 0.5, 0.0, -1.0, -0.5]),
    ("2**y", lambda x, y: 2.0 ** y, None, [2.0, 0.0, -1.0]),
]


@pytest.mark.parametrize("what, fn, x, y", POW_CASES, ids=[c[0] for c in POW_CASES])
def test_gradients_of_powers_at_zero_equal_pytorchs(what, fn, x, y):
    ours = [None if v is None else Tensor(np.array(v), requires_grad=True) for v in (x, y)]
    theirs = [None if v is None else torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (x, y)]
    with np.errstate(divide="ignore"):                      # 0 ** negative is inf, in PyTorch too
        out = fn(*ours)
        want = fn(*theirs)
        np.testing.assert_array_equal(out.numpy(), want.detach().numpy())
        out.sum().backward()
    want.sum().backward()
    for a, b in zip(ours, theirs):
        if a is not None:
            np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())

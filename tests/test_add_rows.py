"""The embedding gradient's fast array function, fast/arrays.py's add_rows (out[rows] += values, repeated
rows adding up), against numpy's np.add.at (ops.ScatterAdd's plain kernel): the same numbers exactly
where every sum is exact (small integers), within float rounding of the sums otherwise (add_rows sums
each run of equal rows with np.add.reduceat, whose order differs from np.add.at's one-by-one for runs
of 8 or more), for rows given in order, repeated, shuffled or negative (counted from the end)."""
import numpy as np
import pytest

from tinygrad_like.fast.arrays import add_rows

rng = np.random.default_rng(2026)


def cases(n_rows):
    yield np.arange(n_rows)                                           # distinct and in order: no sort
    yield rng.integers(0, n_rows, 96)                                 # makemore's (32, 3) lookups
    yield rng.integers(-n_rows, n_rows, 700)                          # negative rows, long runs
    yield np.zeros(20, dtype=np.int64)                                # one run
    yield np.array([3, 1, 3, 0, 1, 3])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_add_rows_is_np_add_at(dtype):
    for rows in cases(27):
        exact = rng.integers(-50, 50, (rows.size, 10)).astype(dtype)     # every partial sum exact
        values = rng.standard_normal((rows.size, 10)).astype(dtype)
        for v, tolerance in ((exact, 0), (values, 8 * np.finfo(dtype).eps * np.sqrt(rows.size))):
            start = rng.standard_normal((27, 10)).astype(dtype) if v is values else np.zeros((27, 10), dtype)
            ours, want = start.copy(), start.copy()
            add_rows(ours, rows, v)
            np.add.at(want, rows, v)
            np.testing.assert_allclose(ours, want, rtol=0, atol=tolerance * (np.abs(v).sum(0).max() + 1))
            if tolerance == 0:
                assert ours.tobytes() == want.tobytes()


def test_add_rows_of_nothing_leaves_out_alone():
    out = np.ones((3, 2))
    add_rows(out, np.zeros(0, dtype=np.int64), np.zeros((0, 2)))
    np.testing.assert_array_equal(out, np.ones((3, 2)))

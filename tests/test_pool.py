"""The engine's thread pool (tinygrad_like/fast/pool.py): products shared out by rows give numpy's product, BLAS is
held to one thread while the pool has more and given back after, and Linear gives the same on 1 thread and 3."""
import numpy as np
import pytest
from threadpoolctl import threadpool_info

import tinygrad_like
from tinygrad_like import Tensor, grad
from tinygrad_like.fast import pool

rng = np.random.default_rng(0)


@pytest.fixture
def threads(monkeypatch):
    """Run the test body with the pool at n threads, sharing out every product however small."""
    monkeypatch.setattr(pool, "MIN_FLOPS", 0)

    def use(n):
        tinygrad_like.set_num_threads(n)
    yield use
    tinygrad_like.set_num_threads(1)


def blas_threads() -> int:
    return max(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")


X = rng.standard_normal((7, 5))  # a transposed view: (5, 7), rows 5 apart in memory
PRODUCTS = {  # name: (a, b); row counts that do not split evenly into 3
    "2-D": (rng.standard_normal((31, 6)), rng.standard_normal((6, 4))),
    "stack of rows times a matrix": (rng.standard_normal((2, 11, 6)), rng.standard_normal((6, 4))),
    "two stacks": (rng.standard_normal((5, 3, 6)), rng.standard_normal((5, 6, 4))),
    "a transposed view": (X.T, rng.standard_normal((7, 3))),
    "float32": (rng.standard_normal((13, 8)).astype(np.float32), rng.standard_normal((8, 9)).astype(np.float32)),
    "fewer rows than threads": (rng.standard_normal((2, 6)), rng.standard_normal((6, 4))),
}


@pytest.mark.parametrize("name", list(PRODUCTS))
def test_shared_product_is_numpys_product(threads, name):
    a, b = PRODUCTS[name]
    expected = np.einsum("...ik,...kj->...ij", a.astype(np.float64), b.astype(np.float64))  # not BLAS
    threads(3)
    out = pool.matmul(a, b)
    assert out.shape == np.matmul(a, b).shape and out.dtype == np.matmul(a, b).dtype
    np.testing.assert_allclose(out, expected, rtol=1e-5 if a.dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("n", [1, 3])
def test_product_plus_a_bias_added_by_each_thread_is_numpys(threads, n):
    """matmul(a, b, add): each thread adds the bias to its own rows; the bits of a @ b + add."""
    a, b, bias = rng.standard_normal((31, 6)), rng.standard_normal((6, 4)), rng.standard_normal(4)
    threads(n)
    np.testing.assert_array_equal(pool.matmul(a, b, bias), a @ b + bias)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_each_gives_every_jobs_result_in_order(threads, n):
    threads(n)
    assert pool.each([lambda i=i: i * i for i in range(5)], flops=pool.MIN_FLOPS) == [0, 1, 4, 9, 16]


def test_a_failing_job_raises_in_the_caller(threads):
    threads(2)

    def fail():
        raise ValueError("job 1 failed")
    with pytest.raises(ValueError, match="job 1 failed"):
        pool.each([lambda: 0, fail], flops=0)


def test_blas_is_held_to_one_thread_while_the_pool_has_more():
    before = blas_threads()
    tinygrad_like.set_num_threads(2)
    try:
        assert blas_threads() == 1
    finally:
        tinygrad_like.set_num_threads(1)
    assert blas_threads() == before


def test_linear_on_three_threads_equals_one_thread(threads):
    x = Tensor(rng.standard_normal((4, 9, 6)), requires_grad=True)
    w, b = Tensor(rng.standard_normal((5, 6)), requires_grad=True), Tensor(rng.standard_normal(5), requires_grad=True)
    u = Tensor(rng.standard_normal((4, 9, 5)))
    results = []
    for n in (1, 3):
        threads(n)
        out = x.linear(w, b)
        results.append([out.numpy(), *(g.numpy() for g in grad((out * u).sum(), [x, w, b]))])
    for one, three in zip(*results):
        np.testing.assert_allclose(three, one, rtol=1e-13, atol=1e-13)


def test_linear_in_float32_on_two_threads_gives_the_bits_of_one(threads):
    """Forward (bias added by each thread to its rows) and backward (dx and dW side by side, each whole
    on one thread): OpenBLAS rounds a row of a product alike whichever rows it is computed with."""
    x = Tensor(rng.standard_normal((3, 40, 24)).astype(np.float32), requires_grad=True)
    w = Tensor(rng.standard_normal((16, 24)).astype(np.float32), requires_grad=True)
    b = Tensor(rng.standard_normal(16).astype(np.float32), requires_grad=True)
    u = Tensor(rng.standard_normal((3, 40, 16)).astype(np.float32))
    results = []
    for n in (1, 2):
        threads(n)
        out = x.linear(w, b)
        results.append([out.numpy(), *(g.numpy() for g in grad((out * u).sum(), [x, w, b]))])
    for one, two in zip(*results):
        np.testing.assert_array_equal(two, one)


def test_a_failing_part_raises_in_the_caller(threads):
    threads(2)

    def part(i):
        if i == 1:
            raise ValueError("part 1 failed")
    with pytest.raises(ValueError, match="part 1 failed"):
        pool.run(part, range(2))


@pytest.mark.parametrize("failing", [0, 1, 2])
def test_after_a_failing_part_the_next_run_runs_every_part(threads, failing):
    """Every thread is done before the error reaches the caller, so the next run starts clean."""
    threads(3)

    def part(i):
        if i == failing:
            raise ValueError(f"part {i} failed")
    with pytest.raises(ValueError, match=f"part {failing} failed"):
        pool.run(part, range(3))
    seen = []
    pool.run(seen.append, range(30))
    assert sorted(seen) == list(range(30))


def test_a_run_inside_a_part_runs_inline(threads):
    threads(2)
    seen = []
    pool.run(lambda i: pool.run(lambda j: seen.append((i, j)), range(3)), range(4))
    assert sorted(seen) == [(i, j) for i in range(4) for j in range(3)]


def test_gelu_pieces_on_two_threads_give_the_bits_of_one(monkeypatch):
    """GELU's cache-sized pieces, cut into one run per thread: each piece is computed alike by whichever
    thread has it, so the bits match (pieces of 30 elements: 35 pieces, the last one short)."""
    from tinygrad_like.fast import fused
    monkeypatch.setattr(fused, "PIECE", 30)
    monkeypatch.setattr(pool, "MIN_BYTES", 0)
    x = Tensor(rng.standard_normal((3, 7, 50)).astype(np.float32), requires_grad=True)
    u = Tensor(rng.standard_normal((3, 7, 50)).astype(np.float32))
    results = []
    for n in (1, 2):
        tinygrad_like.set_num_threads(n)
        try:
            out = x.gelu()
            results.append((out.numpy(), grad((out * u).sum(), [x])[0].numpy()))
        finally:
            tinygrad_like.set_num_threads(1)
    for one, two in zip(*results):
        np.testing.assert_array_equal(one, two)

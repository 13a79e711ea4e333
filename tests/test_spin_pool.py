"""The C threads for products (tinygrad_like/fast/spin_pool.py, kernels/spin_pool.c): numpy's `a @ b` bit for bit
(every row of the result is one gemm call on the same OpenBLAS kernels, whichever thread makes it), the
fallback when the library, the compiler or the BLAS is missing, the thread count following
set_num_threads, a forked child making its own threads, and no thread left spinning when idle."""
import importlib.util
import multiprocessing
import threading
import time

import numpy as np
import pytest

import tinygrad_like
from tinygrad_like import Tensor
from tinygrad_like.composites import multihead_attention
from tinygrad_like.fast import flash, pool, spin_pool
from tinygrad_like.fast.kernels import arrays as K
from tinygrad_like.fast.kernels import c_build
from tinygrad_like.random import manual_seed

pytestmark = pytest.mark.skipif(spin_pool.library() is None, reason=f"no C threads here: {spin_pool.reason()}")
rng = np.random.default_rng(0)


@pytest.fixture
def two_threads(monkeypatch):
    """The pool at 2 threads, every product, however small, to the C threads; back to 1 thread after."""
    monkeypatch.setattr(spin_pool, "MIN_FLOPS", 0)
    tinygrad_like.set_num_threads(2)
    yield
    tinygrad_like.set_num_threads(1)


def layouts(a):
    """a (m, k) as C order, F order, and slices of longer rows or columns (leading dimension > length)."""
    wide = np.zeros((a.shape[0] + 2, a.shape[1] + 3), a.dtype)
    wide[1:-1, 1:-2] = a
    return {"C": a, "F": np.asfortranarray(a),
            "C slice": wide[1:-1, 1:-2], "F slice": np.asfortranarray(wide)[1:-1, 1:-2]}


SHAPES = [(2, 3, 2), (3, 5, 7), (5, 1, 3), (7, 9, 11), (257, 48, 144), (768, 128, 384), (33, 1000, 65), (4, 2500, 3)]


def assert_within_gemm_bound(out, a, b):
    """|out - a @ b| <= 2 k eps (|a| @ |b|): two sums of the same k products in different orders, each
    within k eps |a||b| of the exact one. OpenBLAS may pick other kernels (and so another order of the
    sum) for a block of rows than for the whole (float64 often, float32 seldom: tests/test_spin_pool's
    program shapes are bit for bit), so sharing rows out is not always bit for bit."""
    bound = 2 * a.shape[1] * np.finfo(a.dtype).eps * (np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64))
    excess = np.abs(out.astype(np.float64) - (a @ b).astype(np.float64)) - bound
    assert excess.max() <= 0, f"{excess.max()} above the bound"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m,k,n", SHAPES)
@pytest.mark.parametrize("workers", [1, 2, 3])
def test_product_is_numpys_to_the_gemm_bound(m, k, n, dtype, workers):
    a, b = rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype)
    reference = np.einsum("ik,kj->ij", a.astype(np.float64), b.astype(np.float64))     # not BLAS
    for name_a, la in layouts(a).items():
        for name_b, lb in layouts(b).items():
            out = spin_pool.matmul(la, lb, workers=workers)
            assert out is not None and out.flags.c_contiguous and out.dtype == dtype, (name_a, name_b)
            assert_within_gemm_bound(out, a, b)
            np.testing.assert_allclose(out, reference, rtol=1e-4 if dtype == np.float32 else 1e-11, atol=1e-4)


# The real programs' float32 products (Linear forward, dx = g W, dW = gᵀ x of nanoGPT's 768 rows x 128
# wide, its MLP's 512, chargpt's and makemore's): OpenBLAS gives every block of rows the bits of the whole.
PROGRAM_SHAPES = [(768, 128, 384), (768, 128, 512), (768, 512, 128), (768, 384, 128), (128, 768, 384),
                  (512, 768, 128), (704, 48, 192), (2048, 64, 256), (96, 64, 64)]


@pytest.mark.parametrize("m,k,n", PROGRAM_SHAPES)
def test_program_shapes_in_float32_are_numpys_bit_for_bit(m, k, n):
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    for la in (a, np.asfortranarray(a)):
        np.testing.assert_array_equal(spin_pool.matmul(la, b, workers=1), a @ b)


def stack_layouts(x):
    """A stack x (..., r, c) as it is, with each matrix in F order, with its entries in reverse order in memory
    (a negative batch stride), and with its two leading axes swapped in memory (heads split off a row:
    batch strides that do not collapse into one)."""
    forms = {"C": x, "F": np.swapaxes(np.swapaxes(x, -1, -2).copy(), -1, -2)}
    if x.ndim > 2:
        forms["reversed"] = x[::-1].copy()[::-1]
    if x.ndim == 4:
        forms["heads"] = np.swapaxes(np.swapaxes(x, 0, 1).copy(), 0, 1)
    return forms


STACKS = [((32, 4, 16, 16), (32, 4, 16, 16)), ((64, 3, 11, 16), (64, 3, 16, 11)), ((5, 7, 3), (5, 3, 9)),
          ((3, 2, 2), (3, 2, 2)), ((4, 5, 1), (4, 1, 3)), ((2, 3, 33, 65), (2, 3, 65, 17)), ((6, 5, 4), (4, 3)),
          ((1, 1, 9, 8), (1, 1, 8, 7))]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape_a,shape_b", STACKS)
@pytest.mark.parametrize("workers", [1, 2, 3])
def test_stacked_product_is_numpys_bit_for_bit(shape_a, shape_b, dtype, workers):
    """One gemm per entry, the calls numpy's matmul makes: the same bits, whichever thread makes them."""
    a, b = rng.standard_normal(shape_a).astype(dtype), rng.standard_normal(shape_b).astype(dtype)
    for name_a, la in stack_layouts(a).items():
        for name_b, lb in stack_layouts(b).items():
            out = spin_pool.matmul_stacked(la, lb, workers=workers)
            assert out is not None and out.flags.c_contiguous, (name_a, name_b)
            np.testing.assert_array_equal(out, la @ lb, err_msg=f"{name_a} @ {name_b}")   # F: other bits than C


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("workers", [1, 2])
def test_stacked_product_into_a_view_is_numpys_bit_for_bit(dtype, workers):
    """Into `out` a view of a wider array (attention's gradients in the packed layout (B, T, nh, hs) seen as
    (B, nh, T, hs)): numpy's bits, and nothing written outside the view; an out that overlaps an operand,
    or of another shape or dtype, is refused (None) before anything is written."""
    a, b = (rng.standard_normal((3, 4, 9, 7)).astype(dtype), rng.standard_normal((3, 4, 7, 5)).astype(dtype))
    packed = np.full((3, 9, 4, 5 + 2), 7.0, dtype)                      # two more columns that must stay 7
    view = packed[..., :5].transpose(0, 2, 1, 3)                        # (3, 4, 9, 5), rows 7 elements apart
    assert spin_pool.matmul_stacked(a, b, workers, out=view) is view
    np.testing.assert_array_equal(view, np.matmul(a, b))
    assert (packed[..., 5:] == 7).all()
    wide_a, tall_out = np.zeros((3, 4, 9, 12), dtype), np.zeros((3, 4, 9, 5), dtype)
    wide_a[..., :7], tall_out[:, :, :7] = a, b
    refused = [(wide_a[..., :7], b, wide_a[..., 2:7]), (a, tall_out[:, :, :7], tall_out),       # overlaps
               (a, b, np.empty((3, 4, 9, 6), dtype)), (a, b, np.empty((3, 4, 9, 5), np.float16))]
    for x, y, out in refused:
        before = out.copy()
        assert spin_pool.matmul_stacked(x, y, workers, out=out) is None
        np.testing.assert_array_equal(out, before)


@pytest.mark.parametrize("a,b,why", [
    (np.ones((2, 2, 2, 4, 4)), np.ones((2, 2, 2, 4, 4)), "three batch axes"),
    (np.ones((3, 4, 4)), np.ones((1, 4, 4)), "batch axes that broadcast"),
    (np.ones((3, 1, 4)), np.ones((3, 4, 4)), "one row: gemv"),
    (np.ones((0, 4, 4)), np.ones((0, 4, 4)), "no entries"),
])
def test_stacks_it_cannot_take_are_none(a, b, why):
    assert spin_pool.matmul_stacked(a, b) is None, why


def test_attention_products_through_the_engine_give_the_bits_of_one_thread(two_threads):
    """q kᵀ and its gradients (stacks of (32, 4) products, as makemore's attention makes them)."""
    q, k = (rng.standard_normal((32, 4, 16, 16)).astype(np.float32) for _ in range(2))
    g = rng.standard_normal((32, 4, 16, 16)).astype(np.float32)

    def run():
        tq, tk = Tensor(q, requires_grad=True), Tensor(k, requires_grad=True)
        att = tq @ tk.transpose(-2, -1)
        att.backward(Tensor(g))
        return [att.numpy(), tq.grad.numpy(), tk.grad.numpy()]
    two = run()
    assert spin_pool.alive() == 1
    tinygrad_like.set_num_threads(1)
    for got, want in zip(two, run()):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bias_added_after_the_product_is_numpys_sum(dtype):
    a, b, bias = (rng.standard_normal(s).astype(dtype) for s in [(301, 64), (64, 96), (96,)])
    np.testing.assert_array_equal(spin_pool.matmul(a, b, bias), a @ b + bias)


def test_pair_is_both_products():
    g, w, x = rng.standard_normal((300, 96)), rng.standard_normal((96, 64)), rng.standard_normal((300, 64))
    dx, dw = spin_pool.matmul_pair(g, w, g.T, x)
    np.testing.assert_array_equal(dx, g @ w)
    np.testing.assert_array_equal(dw, g.T @ x)


@pytest.mark.parametrize("a,b,why", [
    (np.ones((1, 8)), np.ones((8, 8)), "one row: numpy takes gemv"),
    (np.ones((8, 8)), np.ones((8, 1)), "one column: numpy takes gemv"),
    (np.ones((0, 8)), np.ones((8, 8)), "empty"),
    (np.ones((8, 0)), np.ones((0, 8)), "empty inner axis"),
    (np.ones((8, 8), np.float32), np.ones((8, 8)), "two dtypes"),
    (np.ones((8, 8), np.int64), np.ones((8, 8), np.int64), "integers"),
    (np.ones((8, 8), np.float16), np.ones((8, 8), np.float16), "half precision"),
    (np.ones((8, 8, 2))[..., 0], np.ones((8, 8)), "no unit step"),
    (np.ones((2, 8, 8)), np.ones((8, 8)), "3-D"),
])
def test_what_it_cannot_take_is_none_and_pool_matmul_still_numpys(two_threads, a, b, why):
    assert spin_pool.matmul(a, b) is None, why
    if a.ndim == 2 or a.shape[-1] == b.shape[0]:
        np.testing.assert_array_equal(pool.matmul(a, b), np.matmul(a, b))


def test_a_times_its_own_transpose_is_left_to_numpy():
    """numpy's matmul computes a @ aᵀ of one buffer with syrk (other bits): not taken."""
    a = rng.standard_normal((64, 32))
    assert spin_pool.matmul(a, a.T) is None


def test_pool_matmul_shares_small_products_out_through_the_c_threads(two_threads):
    a, b = rng.standard_normal((6, 20, 48)).astype(np.float32), rng.standard_normal((48, 40)).astype(np.float32)
    bias = rng.standard_normal(40).astype(np.float32)
    np.testing.assert_array_equal(pool.matmul(a, b, bias), a @ b + bias)
    assert spin_pool.alive() == 1


def test_linear_forward_and_backward_give_the_bits_of_one_thread(two_threads):
    x = rng.standard_normal((4, 33, 48)).astype(np.float32)
    w, b = rng.standard_normal((80, 48)).astype(np.float32), rng.standard_normal(80).astype(np.float32)
    g = rng.standard_normal((4, 33, 80)).astype(np.float32)

    def run():
        params = [Tensor(v, requires_grad=True) for v in (x, w, b)]
        out = params[0].linear(params[1], params[2])
        out.backward(Tensor(g))
        return [out.numpy()] + [p.grad.numpy() for p in params]
    two = run()
    assert spin_pool.alive() == 1
    tinygrad_like.set_num_threads(1)
    for got, want in zip(two, run()):
        np.testing.assert_array_equal(got, want)


def test_products_below_the_threshold_or_on_one_thread_are_left_to_each(two_threads, monkeypatch):
    g, w, x = rng.standard_normal((30, 8)), rng.standard_normal((8, 6)), rng.standard_normal((30, 6))
    assert pool.products([(g, w), (g.T, x)], 10) is not None
    monkeypatch.setattr(spin_pool, "MIN_FLOPS", 100)
    assert pool.products([(g, w), (g.T, x)], 10) is None
    tinygrad_like.set_num_threads(1)
    assert pool.products([(g, w), (g.T, x)], 10 ** 9) is None


def test_set_num_threads_makes_and_stops_the_threads(monkeypatch):
    monkeypatch.setattr(spin_pool, "MIN_FLOPS", 0)
    a, b = rng.standard_normal((40, 30)), rng.standard_normal((30, 20))
    try:
        tinygrad_like.set_num_threads(3)
        np.testing.assert_array_equal(pool.matmul(a, b), a @ b)
        assert spin_pool.alive() == 2
        tinygrad_like.set_num_threads(1)
        assert spin_pool.alive() == 0
        np.testing.assert_array_equal(pool.matmul(a, b), a @ b)
        assert spin_pool.alive() == 0                                      # inline: no thread made
        tinygrad_like.set_num_threads(2)
        np.testing.assert_array_equal(pool.matmul(a, b), a @ b)
        assert spin_pool.alive() == 1
    finally:
        tinygrad_like.set_num_threads(1)


def test_the_worker_sleeps_when_idle(two_threads):
    """The spin is bounded: after a product the worker spins SPIN_NS, then sleeps; over an idle half
    second the process spends next to no CPU time."""
    a, b = rng.standard_normal((200, 100)), rng.standard_normal((100, 100))
    pool.matmul(a, b)
    deadline = time.monotonic() + 5                                     # a loaded machine may run it late
    while spin_pool.sleeping() < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert spin_pool.sleeping() == spin_pool.alive() == 1
    time.sleep(0.5)  # numpy's OpenBLAS threads, woken by an earlier test's product at 2 BLAS threads, spin a while too
    start = time.process_time()
    time.sleep(0.5)
    assert time.process_time() - start < 0.05


def test_two_callers_at_once_both_get_their_product(two_threads):
    """One caller has the C threads, the other runs its rows inline: both right."""
    pairs = [(rng.standard_normal((300, 64)), rng.standard_normal((64, 80))) for _ in range(2)]
    results, errors = [None, None], []

    def call(i):
        try:
            a, b = pairs[i]
            results[i] = [np.array_equal(pool.matmul(a, b), a @ b) for _ in range(200)]
        except Exception as error:  # handed to the test's thread
            errors.append(error)
    threads = [threading.Thread(target=call, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and all(all(r) for r in results)


def _in_child(queue):
    a, b = np.arange(60.0).reshape(12, 5), np.arange(35.0).reshape(5, 7)
    out = pool.matmul(a, b)
    queue.put((spin_pool.alive(), bool(np.array_equal(out, a @ b))))


def test_a_forked_child_makes_its_own_threads(two_threads):
    a, b = rng.standard_normal((40, 30)), rng.standard_normal((30, 20))
    pool.matmul(a, b)
    assert spin_pool.alive() == 1
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_in_child, args=(queue,))
    child.start()
    answer = queue.get(timeout=60)
    child.join(timeout=60)
    assert child.exitcode == 0 and answer == (1, True)
    np.testing.assert_array_equal(pool.matmul(a, b), a @ b)             # the parent's thread still works


@pytest.mark.parametrize("breaks, says", [
    ("env", "TINYGRAD_LIKE_SPIN_POOL"),
    ("compiler", "no C compiler"),
    ("blas", "no ILP64 cblas"),
])
def test_without_the_library_products_take_the_python_pool(monkeypatch, breaks, says):
    if breaks == "env":
        monkeypatch.setenv("TINYGRAD_LIKE_SPIN_POOL", "off")
    elif breaks == "compiler":
        monkeypatch.setattr(c_build, "compiler", lambda: None)
    else:
        monkeypatch.setattr(spin_pool, "GEMM_NAMES", ("no_such_{}gemm",))
    monkeypatch.setattr(spin_pool, "MIN_FLOPS", 0)
    monkeypatch.setattr(pool, "MIN_FLOPS", 0)
    spin_pool.library.cache_clear()
    try:
        assert spin_pool.library() is None and says in spin_pool.reason()
        tinygrad_like.set_num_threads(2)
        a, b = rng.standard_normal((40, 30)), rng.standard_normal((30, 20))
        assert spin_pool.matmul(a, b) is None and pool.products([(a, b), (b.T, a.T)], 10 ** 9) is None
        np.testing.assert_array_equal(pool.matmul(a, b), a @ b)
    finally:
        tinygrad_like.set_num_threads(1)
        spin_pool.library.cache_clear()
        monkeypatch.undo()
        assert spin_pool.library() is not None


def test_the_python_pool_puts_spinning_workers_to_sleep(two_threads, monkeypatch):
    """A worker spinning for the next product sleeps as soon as the Python pool starts its threads
    (pool.run calls park()), so attention's chunks and GELU's runs find the second core free; the next
    product wakes it and gets its rows done."""
    monkeypatch.setenv("TINYGRAD_LIKE_SPIN_US", "20000000")            # 20 s: only park() ends this spin
    spin_pool.configure(1)
    a, b = rng.standard_normal((200, 100)), rng.standard_normal((100, 100))
    pool.matmul(a, b)
    time.sleep(0.05)
    assert spin_pool.alive() == 1 and spin_pool.sleeping() == 0       # still spinning
    pool.run(lambda item: None, range(4))
    deadline = time.monotonic() + 5
    while spin_pool.sleeping() < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert spin_pool.sleeping() == 1
    np.testing.assert_allclose(pool.matmul(a, b), a @ b, rtol=1e-12, atol=1e-12)
    monkeypatch.delenv("TINYGRAD_LIKE_SPIN_US")
    spin_pool.configure(1)                                              # back to SPIN_NS for the next tests


# ---------------------------------------------------------------- compiled kernels on the C threads

def _gelu_pair(forward, backward):
    return lambda x, g: (forward(x, "c"), backward(g, x, "c"))


def _rows_pair(op):
    forward, backward = getattr(K, f"{op}_forward"), getattr(K, f"{op}_backward")
    return lambda x, g: (y := forward(x, "c"), backward(g, y, "c"))


def _cross_entropy(x, g):
    targets = np.arange(len(x)) % max(x.shape[1], 1)
    probs, losses = K.cross_entropy_forward(x, targets, 0.1, "c")
    return probs, losses, K.cross_entropy_backward(probs, targets, 0.1, g[:, 0] if g.size else g[:, :0], "c")


# The kernels arrays.share hands to the C threads, with the shapes they run on: elementwise ones over odd
# counts of elements (cut at multiples of ELEMENTS_PER_CUT), row ones over odd counts of rows, both empty.
ROUTED = {
    "gelu": (_gelu_pair(K.gelu_forward, K.gelu_backward), [(0,), (1,), (7,), (1001,), (4099,), (3, 129)]),
    "gelu_erf": (_gelu_pair(K.gelu_erf_forward, K.gelu_erf_backward), [(0,), (1,), (65,), (4099,)]),
    "silu": (_gelu_pair(K.silu_forward, K.silu_backward), [(1,), (4099,)]),
    "softmax": (_rows_pair("softmax"), [(0, 5), (1, 9), (3, 37), (37, 11), (101, 70)]),
    "log_softmax": (_rows_pair("log_softmax"), [(1, 9), (101, 70)]),
    "swiglu": (lambda x, g: (K.swiglu_forward(x, "c"), K.swiglu_backward(g[:, :x.shape[1] // 2], x, "c")),
               [(1, 18), (37, 74)]),
    "cross_entropy": (_cross_entropy, [(1, 9), (37, 11), (101, 70)]),
}


def routed_outputs(name, shape, dtype):
    fn, _ = ROUTED[name]
    local = np.random.default_rng(abs(hash((name, shape))) % 2**32)
    x, g = (local.standard_normal(shape) * 3).astype(dtype), local.standard_normal(shape).astype(dtype)
    return fn(x, g)


def c_kernels_or_skip():
    if c_build.library() is None:
        pytest.skip(f"no C kernels here: {c_build.reason()}")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("threads, runs_per_thread", [(2, 1), (2, 4), (3, 3)])
@pytest.mark.parametrize("name", list(ROUTED))
def test_kernels_on_the_c_threads_give_the_bits_of_one_call(name, threads, runs_per_thread, dtype, monkeypatch):
    """Every kernel arrays.share routes to the C threads gives, over any count of rows or elements
    (empty, one, odd), the bits of one call over the whole range on the caller."""
    c_kernels_or_skip()
    taken = []
    run_kernel = spin_pool.run_kernel
    monkeypatch.setattr(spin_pool, "run_kernel", lambda *a: taken.append(run_kernel(*a)) or taken[-1])
    monkeypatch.setattr(K, "SPIN_MIN_BYTES", 0)
    monkeypatch.setattr(K, "RUNS_PER_THREAD", runs_per_thread)
    try:
        for shape in ROUTED[name][1]:
            tinygrad_like.set_num_threads(1)
            one = routed_outputs(name, shape, dtype)
            tinygrad_like.set_num_threads(threads)
            taken.clear()
            shared = routed_outputs(name, shape, dtype)
            assert taken and None not in taken, (shape, taken)                  # it went to the C threads
            for a, b in zip(shared, one):
                np.testing.assert_array_equal(a, b, err_msg=f"{name} {shape} {dtype.__name__}")
    finally:
        tinygrad_like.set_num_threads(1)


class _OneCall:
    """A kernel stand-in that records its calls and refuses to be bound (`bind` is for jobs that are cut)."""

    def __init__(self):
        self.calls = []

    def __call__(self, *args):
        self.calls.append(args)

    def bind(self, *args):
        raise AssertionError("bound a job that runs in one call")


@pytest.mark.parametrize("threads, nbytes, python_pool", [(1, 1 << 30, True), (1, 1 << 30, False),
                                                          (2, 0, True), (2, 0, False)])
def test_a_job_for_one_thread_is_one_direct_call(threads, nbytes, python_pool):
    """With one thread in the pool, or a job below both thresholds (SPIN_MIN_BYTES, pool.MIN_BYTES),
    share makes one call over the whole range with the arguments as given, and binds nothing."""
    fn = _OneCall()
    try:
        tinygrad_like.set_num_threads(threads)
        K.share(fn, 1001, nbytes, "a", 2.5, unit=K.ELEMENTS_PER_CUT, python_pool=python_pool)
    finally:
        tinygrad_like.set_num_threads(1)
    assert fn.calls == [("a", 2.5, 0, 1001)]


def test_every_c_kernel_has_a_signature_the_c_threads_call():
    """A kernel of rows.c or attention.c whose parameter list spin_pool.c does not know would run on the
    Python pool without a word: every one of them is known, and a list it does not know says so."""
    for name, (kinds, rows) in K.C_ARGS.items():
        assert spin_pool.signature("".join(K.SPIN_KINDS[k] for k in kinds) + ("l" if rows else "")) >= 0, name
    assert spin_pool.signature("pppppsssss") == -1
    assert spin_pool.run_kernel(0, "pppppsssss", 4, [0] * 5 + [1.0] * 5, 0, 10, 1, 2) is None


def test_a_worker_takes_runs_of_a_kernel(two_threads):
    """The C thread takes part: of repeated GELUs over 4 MB, one at least reports a worker's runs done
    (a loaded machine may leave the worker off its core for a while: up to 10 s)."""
    c_kernels_or_skip()
    x = rng.standard_normal(1 << 20).astype(np.float32)
    fn = K.kernel("gelu_forward", "c", np.dtype(np.float32))
    out = np.empty_like(x)
    bound = fn.bind(x, *K._typed(x.dtype, K.GELU_C, K.GELU_C * 0.044715, 0.5), out)
    deadline, helped = time.monotonic() + 10, 0
    while helped < 1 and time.monotonic() < deadline:
        helped = spin_pool.run_kernel(*bound.spin, 0, x.size, K.ELEMENTS_PER_CUT, 64, 1)
    assert helped == 1
    np.testing.assert_array_equal(out, K.gelu_forward(x, "c"))


def test_the_worker_sleeps_after_kernels(two_threads, monkeypatch):
    """After a kernel job, as after a product, the worker spins SPIN_NS and then sleeps."""
    c_kernels_or_skip()
    monkeypatch.setattr(K, "SPIN_MIN_BYTES", 0)
    K.gelu_forward(rng.standard_normal(4096).astype(np.float32), "c")
    deadline = time.monotonic() + 5
    while spin_pool.sleeping() < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert spin_pool.sleeping() == spin_pool.alive() == 1


def _kernel_in_child(queue):
    x = np.linspace(-4, 4, 5000, dtype=np.float32)
    y = K.gelu_forward(x, "c")
    queue.put((spin_pool.alive(), y))


def test_a_forked_child_runs_kernels_on_its_own_threads(two_threads, monkeypatch):
    c_kernels_or_skip()
    monkeypatch.setattr(K, "SPIN_MIN_BYTES", 0)
    x = np.linspace(-4, 4, 5000, dtype=np.float32)
    want = K.gelu_forward(x, "c")
    assert spin_pool.alive() == 1
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_kernel_in_child, args=(queue,))
    child.start()
    alive, got = queue.get(timeout=60)
    child.join(timeout=60)
    assert child.exitcode == 0 and alive == 1
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(K.gelu_forward(x, "c"), want)            # the parent's thread still works


def test_without_the_c_threads_kernels_take_the_python_pool(monkeypatch):
    """TINYGRAD_LIKE_SPIN_POOL=off: the kernels run on the Python pool's threads, and attention's products
    and kernels on the caller, with the same bits."""
    c_kernels_or_skip()
    x = rng.standard_normal(4099).astype(np.float32)
    want = K.gelu_forward(x, "c")
    qkv = np.random.default_rng(2).standard_normal((12, 64, 384)).astype(np.float32)
    tinygrad_like.set_num_threads(1)
    attention = _attention_step(qkv, 4, True, 0.0, False)
    monkeypatch.setenv("TINYGRAD_LIKE_SPIN_POOL", "off")
    monkeypatch.setattr(K, "SPIN_MIN_BYTES", 0)
    monkeypatch.setattr(pool, "MIN_BYTES", 0)
    spin_pool.library.cache_clear()
    spin_pool.signature.cache_clear()
    used = []
    run = pool.run
    monkeypatch.setattr(pool, "run", lambda task, items: used.append(len(list(items))) or run(task, items))
    try:
        assert spin_pool.library() is None
        tinygrad_like.set_num_threads(2)
        np.testing.assert_array_equal(K.gelu_forward(x, "c"), want)
        assert used == [2 * K.RUNS_PER_THREAD]
        for got, expected in zip(_attention_step(qkv, 4, True, 0.0, False), attention):
            np.testing.assert_array_equal(got, expected)
    finally:
        tinygrad_like.set_num_threads(1)
        monkeypatch.undo()
        spin_pool.library.cache_clear()
        spin_pool.signature.cache_clear()
        assert spin_pool.library() is not None


def _attention_step(qkv, heads, causal, dropout, packed):
    """out and d qkv of attention over the packed projection qkv (B, T, 3C): the fused Attention op on
    (B, nh, T, hs) views (nanoGPT's F.scaled_dot_product_attention) or MultiHeadAttention (`packed`)."""
    B, T, C3 = qkv.shape
    x = Tensor(qkv, requires_grad=True)
    if packed:
        y = multihead_attention(x, heads, heads, is_causal=causal, dropout_p=dropout)
    else:
        q, k, v = (x[:, :, i * C3 // 3:(i + 1) * C3 // 3].reshape(B, T, heads, -1).transpose(1, 2) for i in range(3))
        y = q.scaled_dot_product_attention(k, v, is_causal=causal, dropout_p=dropout)
    y.backward(Tensor(np.cos(np.arange(np.prod(y.shape))).reshape(y.shape).astype(qkv.dtype)))
    return y.numpy(), x.grad.numpy()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("B, heads, T, hs, causal, dropout", [(12, 4, 64, 32, True, 0.2), (3, 2, 40, 16, False, 0.0),
                                                             (5, 3, 17, 8, True, 0.0), (1, 1, 64, 32, True, 0.1)])
def test_attention_on_the_c_threads_gives_the_bits_of_one_thread(B, heads, T, hs, causal, dropout, dtype, monkeypatch):
    """Attention whose scores fit in one tile (nanoGPT's: B 12, 4 heads, T 64, 32 wide, float32) runs as one
    chunk on the caller, its products and kernels shared out among the C threads; more chunks run on the
    Python pool's threads, each doing its products and kernels itself. Either way forward and backward
    give the bits of one thread (the same dropout noise: the generator seeded alike)."""
    c_kernels_or_skip()
    monkeypatch.setattr(spin_pool, "MIN_FLOPS", 0)
    monkeypatch.setattr(K, "SPIN_MIN_BYTES", 0)
    used = {"products": 0, "kernels": 0}
    stacked, run_kernel = spin_pool.matmul_stacked, spin_pool.run_kernel

    def counted(name, fn):
        def call(*args):
            result = fn(*args)
            used[name] += result is not None
            return result
        return call
    monkeypatch.setattr(spin_pool, "matmul_stacked", counted("products", stacked))
    monkeypatch.setattr(spin_pool, "run_kernel", counted("kernels", run_kernel))
    qkv = np.random.default_rng(1).standard_normal((B, T, 3 * heads * hs)).astype(dtype)
    try:
        for packed in (False, True):
            tinygrad_like.set_num_threads(1)
            manual_seed(5)
            one = _attention_step(qkv, heads, causal, dropout, packed)
            tinygrad_like.set_num_threads(2)
            manual_seed(5)
            two = _attention_step(qkv, heads, causal, dropout, packed)
            for got, want in zip(two, one):
                np.testing.assert_array_equal(got, want, err_msg=f"packed {packed}")
    finally:
        tinygrad_like.set_num_threads(1)
    if B * heads * T * T * np.dtype(dtype).itemsize <= flash.l2_bytes() // 2:      # one chunk, on the caller
        kernels_on = importlib.util.find_spec("numba") is not None   # the kernels need the fast extra (numba)
        assert used["products"] > 0 and bool(used["kernels"]) is kernels_on, used
    else:                                              # chunks on the Python pool: each on its own thread
        assert used == {"products": 0, "kernels": 0}

"""fast/elementwise.py: large elementwise work cut into pieces on the thread pool gives the bits numpy's one
call gives, for every function and every way of cutting (flat, along the first axis, cache-sized pieces),
and the ops, walk rules and array functions that use it give what they gave before (their plain lines)."""
import warnings

import numpy as np
import pytest

import tinygrad_like
from tinygrad_like import Tensor, autograd, composed
from tinygrad_like.fast import arrays, elementwise, pool, walk

rng = np.random.default_rng(7)


@pytest.fixture(params=[2, 3])
def shared(request, monkeypatch):
    """The pool at 2 or 3 threads, sharing out everything from a few kilobytes on (ops.LARGE and SHARE_FROM
    lowered), and a count of the runs handed to the pool, so that a test can check it shared at all."""
    monkeypatch.setattr(elementwise, "SHARE_FROM", 1 << 12)
    monkeypatch.setattr(elementwise, "LARGE", 1 << 10)
    runs = []
    real = pool.run

    def counted(task, items):
        runs.append(len(list(items)))
        return real(task, items)
    monkeypatch.setattr(pool, "run", counted)
    tinygrad_like.set_num_threads(request.param)
    yield runs
    tinygrad_like.set_num_threads(1)


def odd(shape, dtype=np.float32):
    """Random entries with NaN, -0.0, ±inf and a subnormal among them; sizes that do not cut evenly."""
    a = (rng.standard_normal(shape) * 3).astype(dtype)
    a.reshape(-1)[:5] = [np.nan, -0.0, np.inf, -np.inf, np.finfo(dtype).tiny / 4]
    return a


def same_bits(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.flags.c_contiguous
    assert got.tobytes() == want.tobytes()


UFUNC_CASES = {  # name: (ufunc, inputs)
    "multiply, same shape (flat)": lambda: (np.multiply, odd((5, 7, 301)), odd((5, 7, 301))),
    "multiply by a 0-d value (flat)": lambda: (np.multiply, odd((9, 1001)), np.array(0.125, np.float32)),
    "add a bias row (first axis)": lambda: (np.add, odd((13, 4, 97)), odd((97,))),
    "subtract, value first": lambda: (np.subtract, np.array(1, np.float32), odd((3, 2999))),
    "tanh (flat)": lambda: (np.tanh, odd((7, 3333))),
    "tanh float64": lambda: (np.tanh, odd((5, 2001), np.float64)),
    "multiply float64, broadcast both ways": lambda: (np.multiply, odd((11, 1, 300), np.float64),
                                                      odd((1, 5, 300), np.float64)),
    "a transposed input (first axis)": lambda: (np.multiply, odd((301, 40)).T, odd((40, 301))),
}


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")   # inf - inf, on purpose
@pytest.mark.parametrize("name", list(UFUNC_CASES))
def test_ufunc_in_pieces_gives_numpys_bits(shared, name):
    f, *inputs = UFUNC_CASES[name]()
    same_bits(elementwise.ufunc(f, *inputs), f(*inputs))
    assert shared and all(n >= 2 for n in shared)


def test_mixed_dtypes_and_small_results_run_numpys_call(shared):
    x32, x64 = odd((50, 300)), odd((50, 300), np.float64)
    same_bits(elementwise.ufunc(np.multiply, x32, x64), x32 * x64)
    same_bits(elementwise.ufunc(np.multiply, x32[:2, :2], x32[:2, :2]), x32[:2, :2] * x32[:2, :2])
    assert not shared


def test_one_thread_runs_numpys_call_inline(monkeypatch):
    monkeypatch.setattr(elementwise, "SHARE_FROM", 0)
    tinygrad_like.set_num_threads(1)
    called = []
    monkeypatch.setattr(pool, "run", lambda task, items: called.append(1))
    x = odd((64, 999))
    same_bits(elementwise.mul(x, x), x * x)
    assert not called


@pytest.mark.parametrize("piece", [None, 1000, 4096, 10 ** 6])
def test_pieces_cover_the_result_once(shared, piece):
    """Every entry written once by the step: a count of visits, cut flat and along the first axis."""
    for inputs in [(np.ones((37, 501), np.float32),), (np.ones((37, 501), np.float32), np.ones(501, np.float32))]:
        def visit(outs, ins):
            outs[0][...] = sum(ins)
        got = elementwise.share(visit, (37, 501), np.float32, *inputs, piece=piece)
        np.testing.assert_array_equal(got, len(inputs))


def test_flat_pieces_start_at_aligned_places(monkeypatch):
    monkeypatch.setattr(elementwise, "ALIGN", 64)
    flat, pieces = elementwise._pieces((10, 1000), (np.ones((10, 1000)),), 3)
    assert flat and [p[0].start % 64 for p in pieces] == [0, 0, 0]
    assert pieces[0][0].start == 0 and pieces[-1][0].stop == 10000


def test_a_first_axis_too_short_is_not_cut():
    assert elementwise._pieces((1, 4000), (np.ones((1, 4000)), np.ones(4000)[::-1]), 2) is None


def test_the_callers_errstate_holds_on_every_thread(shared):
    """inf - inf in every piece: with invalid="raise" an error in the caller, with "ignore" no warning, by
    default numpy's warning."""
    x = np.full((40, 500), np.inf, np.float32)
    with np.errstate(invalid="raise"), pytest.raises(FloatingPointError, match="invalid value"):
        elementwise.ufunc(np.subtract, x, x)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with np.errstate(invalid="ignore"):
            np.testing.assert_array_equal(elementwise.ufunc(np.subtract, x, x), np.nan)
        assert not caught
        elementwise.ufunc(np.subtract, x, x)
        assert caught and all("invalid value" in str(w.message) for w in caught)


def test_an_error_in_a_piece_reaches_the_caller(shared):
    def fails(outs, ins):
        raise FloatingPointError("piece")
    with pytest.raises(FloatingPointError, match="piece"):
        elementwise.share(fails, (40, 500), np.float32, np.ones((40, 500), np.float32))


# ---------------------------------------------------------------- the ops and rules that use it

def test_primitive_forwards_match_the_unshared_ones(shared, monkeypatch):
    """The forwards that use it (the fast path's square and cube, masked_fill) shared out, against the same
    on one piece; masked_fill also against the plain op (composed(): the fast path off)."""
    x, mask = odd((12, 3, 48, 48)), (np.tril(np.ones((48, 48))) == 0)[None, None]
    runs = {"cube": lambda a: a ** 3, "square": lambda a: a ** 2,
            "masked_fill": lambda a: a.masked_fill(Tensor(mask), float("-inf"))}
    for name, run in runs.items():
        before = len(shared)
        fast = run(Tensor(x)).numpy()
        assert len(shared) > before, name
        with monkeypatch.context() as one_piece:
            one_piece.setattr(elementwise, "SHARE_FROM", 1 << 62)
            same_bits(fast, run(Tensor(x)).numpy())
    with composed():                                        # the plain ops.power is np.power: other roundings
        same_bits(runs["masked_fill"](Tensor(x)).numpy(), fast)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")   # inf * 0, on purpose
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_walk_rules_in_pieces_match_the_plain_walk(shared, dtype):
    """The lean walk's Mul and Tanh rules in pieces against the plain walk (autograd.backprop), bit for bit:
    both factors needing a gradient, one, a broadcast factor, and tanh's three steps."""
    arrays = odd((8, 700), dtype), odd((8, 700), dtype), odd((700,), dtype), odd((8, 700), dtype)

    def grads(fast):
        a, b, c = (Tensor(x.copy(), requires_grad=True) for x in arrays[:3])
        d = Tensor(arrays[3])
        loss = ((a * b).tanh() * c * d * 0.5).sum()
        if fast:
            walk.backward(loss)
        else:
            with composed():
                loss.backward()
        return [t.grad.numpy() for t in (a, b, c)]
    before = len(shared)
    fast = grads(True)
    assert len(shared) > before
    for got, want in zip(fast, grads(False)):
        same_bits(got, want)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")   # inf * 0, on purpose
def test_tanh_rule_pieces_equal_its_plain_line(shared):
    g, o = odd((9, 2000)), np.tanh(odd((9, 2000)))
    plain = g * (np.asarray(1, o.dtype) - o * o)
    same_bits(elementwise.share(walk._tanh_slope, o.shape, o.dtype, g, o, piece=walk.TANH_PIECE), plain)


def test_masked_fill_in_pieces_gives_np_where(shared):
    a = odd((5, 4, 64, 64))                                  # over FILL_FROM
    for mask in [(np.tril(np.ones((64, 64))) == 0)[None, None], rng.random(a.shape) < 0.5, rng.random(64) < 0.5]:
        for value in [np.float32(-np.inf), np.float32(0.0), np.float64(1e300)]:
            same_bits(arrays.where(mask, value, a), np.where(mask, value, a))
            same_bits(arrays.where(mask, a, value), np.where(mask, a, value))
    same_bits(arrays.where(mask, 0.0, a.transpose(0, 1, 3, 2)), np.where(mask, 0.0, a.transpose(0, 1, 3, 2)))


@pytest.mark.parametrize("n", [20_001, 100_000])
def test_dropout_draw_in_pieces_gives_the_plain_mask(shared, n, monkeypatch):
    """fast/streams.keep_below's numba variant compares its pairs in pieces on the pool: the plain draw's mask,
    the stream left at the same place (twister.c's variant draws in one pass on the calling thread)."""
    pytest.importorskip("numba", reason="the compiled draw needs numba (the `fast` extra)")
    monkeypatch.setenv("TINYGRAD_LIKE_KERNELS", "numba")
    from tinygrad_like.fast import streams
    from tinygrad_like.pytorch_streams.generator import TorchGenerator, bernoulli_threshold, keep_below
    fast_draw, plain_draw = TorchGenerator(31), TorchGenerator(31)
    for p in (0.1, 0.5):
        before = len(shared)
        got = streams.keep_below(fast_draw._bits, bernoulli_threshold(p), n)
        assert len(shared) > before
        np.testing.assert_array_equal(got, keep_below(plain_draw._bits, bernoulli_threshold(p), n))
        assert fast_draw.words(3).tolist() == plain_draw.words(3).tolist()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_dropout_scale_in_pieces_gives_the_plain_noise(shared, dtype):
    """fast/elementwise.scaled (cast and product in one pass per piece) against random.scaled (astype, then *=)."""
    from tinygrad_like import random
    keep = rng.random((7, 3001)) < 0.9
    for scale in [np.dtype(dtype).type(1) / np.dtype(dtype).type(0.9), np.dtype(dtype).type(1 / 0.3)]:
        before = len(shared)
        same_bits(elementwise.scaled(keep, scale), random.scaled(keep, scale))
        assert len(shared) > before


def test_a_large_input_with_a_small_result_is_shared(shared, monkeypatch):
    """The pairs of dropout's draw: 8 bytes read per byte written; the size that counts is the largest array."""
    monkeypatch.setattr(elementwise, "SHARE_FROM", 8 * 5000)
    words = np.arange(5000, dtype=np.uint64)
    got = elementwise.share(lambda outs, ins: np.less(ins[0], 2500, out=outs[0]), (5000,), bool, words)
    assert shared and got.sum() == 2500


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")   # inf - inf, on purpose
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_power_rule_in_pieces_matches_the_plain_walk(shared, dtype):
    """The lean walk's PowConst rule (x ** 3, x ** 2, x ** 1: NewGELU's cube) with its products in pieces,
    against the plain walk, bit for bit."""
    x0 = odd((9, 800), dtype)

    def grads(fast):
        x = Tensor(x0.copy(), requires_grad=True)
        loss = (x ** 3 * 0.25 + x ** 2 + x ** 1).sum()
        (walk.backward if fast else autograd.backward)(loss)   # the plain walk, with the fast path's kernels
        return x.grad.numpy()
    before = len(shared)
    fast = grads(True)
    assert len(shared) > before
    same_bits(fast, grads(False))

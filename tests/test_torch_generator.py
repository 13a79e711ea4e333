"""tinygrad_like.pytorch_streams draws PyTorch's CPU numbers, bit for bit: checked against PyTorch's answers
stored in tests/torch_streams.json (made by tests/make_torch_streams.py, so these run without PyTorch), and
live against PyTorch when it is installed. Also: the state round trip (ours and PyTorch's bytes), the
fused multiply-add helpers against exact rational arithmetic, and bad input."""
from __future__ import annotations

import collections
import json
import pathlib
import sys
from fractions import Fraction

import numpy as np
import pytest

from tinygrad_like.pytorch_streams import cephes_float32
from tinygrad_like.pytorch_streams.fma import fma32, fma64
from tinygrad_like.pytorch_streams.generator import DEFAULT_SEED, TorchGenerator

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from torch_stream_cases import cases, digest, draw_ours, draw_torch, key  # noqa: E402

STORED = json.loads((pathlib.Path(__file__).resolve().parent / "torch_streams.json").read_text())["answers"]
BY_KIND = collections.defaultdict(list)
for _case in cases():
    BY_KIND[_case[0]].append(_case)


@pytest.mark.parametrize("kind", sorted(BY_KIND))
def test_streams_equal_pytorchs_stored_answers(kind):
    wrong = [key(case) for case in BY_KIND[kind] if digest(draw_ours(case)) != STORED[key(case)]]
    assert not wrong, f"{len(wrong)} of {len(BY_KIND[kind])} {kind} draws differ from PyTorch's, e.g. {wrong[:5]}"


@pytest.mark.parametrize("kind", sorted(BY_KIND))
def test_streams_equal_pytorchs_live(kind):
    torch = pytest.importorskip("torch", reason="the live comparison needs PyTorch; the stored one runs without")
    wrong = []
    for case in BY_KIND[kind]:
        ours, theirs = draw_ours(case), draw_torch(case, torch)
        if any(a.shape != b.shape or a.dtype != b.dtype or not np.array_equal(a, b) for a, b in zip(ours, theirs)):
            wrong.append(key(case))
    assert not wrong, f"{len(wrong)} of {len(BY_KIND[kind])} {kind} draws differ from PyTorch's, e.g. {wrong[:5]}"


def test_stored_answers_cover_every_case():
    assert {key(case) for case in cases()} == {name for name in STORED if not name.startswith("program: ")}


# ---------------------------------------------------------------- seed and state
def test_seeds_as_pytorch_stores_them():
    assert TorchGenerator().initial_seed() == DEFAULT_SEED == 67280421310721
    assert TorchGenerator(-1).initial_seed() == 2 ** 64 - 1
    g = TorchGenerator(2 ** 32 + 5)
    assert g.initial_seed() == 2 ** 32 + 5
    np.testing.assert_array_equal(g.uniform((4,)), TorchGenerator(5).uniform((4,)))   # the low 32 bits seed it


def test_reference_twister_outputs():
    # MT19937's reference outputs for seed 5489 (its default): the 1st is 3499211612, the 10000th 4123659995
    words = TorchGenerator(5489).words(10000)
    assert int(words[0]) == 3499211612 and int(words[-1]) == 4123659995


def test_state_round_trip_mid_block_with_a_cached_normal():
    g = TorchGenerator(7)
    g.normal((3,))                                   # leaves one normal cached
    g.words(700)                                     # and the twister mid-block
    state = g.get_state()
    first = [g.normal((5,)), g.uniform((20,), np.float64), g.integers(0, 10, (4,))]
    g.set_state(state)
    again = [g.normal((5,)), g.uniform((20,), np.float64), g.integers(0, 10, (4,))]
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    assert g.initial_seed() == 7


def test_state_bytes_are_pytorchs():
    torch = pytest.importorskip("torch", reason="compares with torch.Generator().get_state()")
    ours, theirs = TorchGenerator(11), torch.Generator().manual_seed(11)
    for step in range(3):
        np.testing.assert_array_equal(ours.get_state(), theirs.get_state().numpy(), err_msg=f"step {step}")
        ours.normal((3,)), torch.randn(3, generator=theirs)          # a cached normal after odd counts
        ours.words(650), torch.randint(0, 10, (650,), generator=theirs)
    other = TorchGenerator(0).set_state(theirs.get_state().numpy())   # PyTorch's bytes continue PyTorch's stream
    np.testing.assert_array_equal(other.normal((7,)), torch.randn(7, generator=theirs).numpy())


def test_set_state_refuses_what_is_not_a_state():
    g = TorchGenerator(1)
    with pytest.raises(ValueError, match="5056 bytes"):
        g.set_state(np.zeros(10, dtype=np.uint8))
    bad = g.get_state()
    bad[16:24] = np.frombuffer(np.uint64(9999).tobytes(), dtype=np.uint8)
    with pytest.raises(ValueError, match="position 9999"):
        g.set_state(bad)


# ---------------------------------------------------------------- draws: edges and bad input
def test_empty_and_single_draws():
    g = TorchGenerator(3)
    assert g.normal((0,)).shape == (0,) and g.uniform((2, 0)).shape == (2, 0)
    assert g.permutation(0).tolist() == [] and g.permutation(1).tolist() == [0]
    assert g.integers(4, 5, (3,)).tolist() == [4, 4, 4]


def test_randint_refuses_an_empty_range():
    with pytest.raises(ValueError, match="low \\(3\\) must be smaller than high \\(3\\)"):
        TorchGenerator(0).integers(3, 3, (2,))


def test_uniform_never_returns_its_upper_bound():
    # a float32 draw that rounds up to `high` becomes `low`, as PyTorch's kernel does
    x = TorchGenerator(0).uniform((100000,), np.float32, 1.0, 1.0 + 2 ** -20)
    assert ((x >= np.float32(1.0)) & (x < np.float32(1.0 + 2 ** -20))).all()


def test_draw_moments():
    """An independent sanity check of the transforms (not of PyTorch equality): means and spreads."""
    g = TorchGenerator(123)
    z = g.normal((200000,), np.float32, 0.5, 2.0)
    assert abs(z.mean() - 0.5) < 0.02 and abs(z.std() - 2.0) < 0.02
    u = g.uniform((200000,), np.float64, -1.0, 3.0)
    assert abs(u.mean() - 1.0) < 0.02 and u.min() >= -1.0 and u.max() < 3.0
    e = g.exponential((200000,), np.float64, 2.0)
    assert abs(e.mean() - 0.5) < 0.01 and e.min() >= 0
    counts = np.bincount(g.multinomial(np.array([[1.0, 3.0, 0.0, 4.0]]), 80000, replacement=True)[0], minlength=4)
    np.testing.assert_allclose(counts / 80000, [1 / 8, 3 / 8, 0, 4 / 8], atol=0.01)
    assert sorted(g.permutation(1000).tolist()) == list(range(1000))


# ---------------------------------------------------------------- the numerical helpers
def _exact_fma(a, b, c) -> float:
    """a·b + c rounded once to float64 (Python's float(Fraction) rounds correctly)."""
    return float(Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c)))


def _nearest_f32(a, b, c) -> np.float32:
    """a·b + c rounded once to float32: the nearest of the float32 neighbours of a first guess, ties to even."""
    exact = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    guess = np.float32(float(exact))
    near = [np.nextafter(guess, np.float32(-np.inf)), guess, np.nextafter(guess, np.float32(np.inf))]
    return min(near, key=lambda f: (abs(Fraction(float(f)) - exact), int(np.float32(f).view(np.int32)) & 1))


def test_fma32_rounds_once():
    rng = np.random.default_rng(0)
    a, b, c = ((rng.standard_normal(20000) * 10.0 ** rng.integers(-3, 4, 20000)).astype(np.float32)
               for _ in range(3))
    expected = np.array([_nearest_f32(x, y, z) for x, y, z in zip(a, b, c)], dtype=np.float32)
    np.testing.assert_array_equal(fma32(a, b, c), expected)


def test_fma32_when_float64_lands_on_a_float32_tie():
    # a·b = -64 + 2^-40 exactly; c = 2^30 + 128; the sum 2^30 + 64 + 2^-40 is just above the float32 tie
    # 2^30 + 64, but float64 rounds it onto the tie, and ties-to-even would then give 2^30
    a, b, c = np.float32(1 + 2 ** -23), np.float32(-64 * (1 - 2 ** -23)), np.float32(2 ** 30 + 128)
    assert (np.float64(a) * np.float64(b) + np.float64(c)).astype(np.float32) == np.float32(2 ** 30)  # the trap
    assert fma32(a, b, c) == np.float32(2 ** 30 + 128) == _nearest_f32(a, b, c)


def test_fma64_rounds_once():
    rng = np.random.default_rng(1)
    a = rng.standard_normal(20000) * 10.0 ** rng.integers(-5, 6, 20000)
    b = rng.standard_normal(20000)
    c = -a * b * (1 + rng.standard_normal(20000) * 2.0 ** -30)       # large cancellations too
    c[::2] = rng.standard_normal(10000)
    expected = np.array([_exact_fma(x, y, z) for x, y, z in zip(a, b, c)])
    np.testing.assert_array_equal(fma64(a, b, c), expected)


def test_fma64_near_a_tie():
    # a·b = -2 + 2^-103 exactly; c = 2^54 + 4: the sum lies just above the tie 2^54 + 2, so it rounds up
    a, b, c = 1 + 2.0 ** -52, -2 * (1 - 2.0 ** -52), 2.0 ** 54 + 4
    assert a * b + c == 2.0 ** 54                                     # two roundings go the wrong way
    assert fma64(a, b, c) == 2.0 ** 54 + 4 == _exact_fma(a, b, c)
    assert np.isnan(fma64(np.inf, 0.0, 1.0)) and fma64(np.inf, 2.0, 1.0) == np.inf
    assert fma64(1e300, 1e300, -np.inf) == -np.inf


def test_cephes_float32_functions_are_accurate():
    x = np.linspace(1e-7, 1.0, 100001, dtype=np.float32)
    np.testing.assert_allclose(cephes_float32.log(x), np.log(x.astype(np.float64)), rtol=3e-7, atol=1e-7)
    assert np.isnan(cephes_float32.log(np.float32([0.0, -1.0]))).all()
    theta = np.linspace(-7.0, 7.0, 100001, dtype=np.float32)
    sin, cos = cephes_float32.sincos(theta)
    np.testing.assert_allclose(sin, np.sin(theta.astype(np.float64)), atol=2e-7)
    np.testing.assert_allclose(cos, np.cos(theta.astype(np.float64)), atol=2e-7)


# ---------------------------------------------------------------- bernoulli on integers, dropout's noise
@pytest.mark.parametrize("p", [0.0, 2.0 ** -53, 1e-300, 0.2, 0.5, 0.8, 3 * 2.0 ** -50, 1 - 2.0 ** -53, 1.0,
                               1.5, -0.25, float("nan")])
def test_bernoulli_compares_integers_as_the_floats_would(p):
    """bernoulli(p) on the 53-bit integers (k < ⌈p·2^53⌉) gives what its definition u < p does on the
    float64 uniforms u = k·2^-53, drawn again from the same seed, across twists of the stream; p on a
    multiple of 2^-53 is where ⌈⌉ matters."""
    shape = (3, 701)                                   # 4206 words: beyond six twists of 624
    drawn = TorchGenerator(11).bernoulli(p, shape)
    u = TorchGenerator(11)._unit(3 * 701, np.float64).reshape(shape)
    np.testing.assert_array_equal(drawn, u < p)
    g = TorchGenerator(11)
    g.words(5)                                         # from the middle of a block of words, too
    u = TorchGenerator(11)
    u.words(5)
    np.testing.assert_array_equal(g.bernoulli(p, (999,)), u._unit(999, np.float64) < p)


def test_bernoulli_on_the_threshold_itself():
    """k = T − 1 is kept and k = T is not, for T = ⌈p·2^53⌉: p = k·2^-53 exactly and p just above it."""
    from tinygrad_like.pytorch_streams.generator import bernoulli_threshold
    k = 123456789 * 2 ** 20
    assert bernoulli_threshold(k * 2.0 ** -53) == k
    assert bernoulli_threshold((k + 0.5) * 2.0 ** -53) == k + 1
    assert bernoulli_threshold(0.0) == 0 and bernoulli_threshold(1.0) == 2 ** 53


@pytest.mark.parametrize("skip", [0, 5, 623, 624, 1247, 300])
@pytest.mark.parametrize("n", [512, 4097, 5000 * 2 + 1])
@pytest.mark.parametrize("in_place", [True, False])
@pytest.mark.parametrize("variant", ["c", "numba"])
def test_compiled_bernoulli_draws_the_plain_bits(skip, n, in_place, variant, monkeypatch):
    """fast/streams.py's keep_below (twister.c's or numba's twister) gives the plain draw's mask and leaves the
    stream where the plain one does, from any position in a block (a pair of words straddling a twist
    included), on numpy's state in place and through its public copy (where the in-place layout would not hold)."""
    pytest.importorskip("numba", reason="the compiled draw needs numba (the `fast` extra)")
    monkeypatch.setenv("TINYGRAD_LIKE_KERNELS", variant)
    from tinygrad_like import fast
    from tinygrad_like.fast import streams
    if variant == "c" and streams.twister_library() is None:
        pytest.skip(f"twister.c does not build here: {streams.reason()}")
    assert streams.variant(2 ** 52, n) == variant
    assert streams._layout_holds()                                # on this numpy; else the copy path runs
    monkeypatch.setattr(streams, "_layout_holds", lambda: in_place)
    from tinygrad_like.pytorch_streams.generator import bernoulli_threshold, keep_below
    fast_draw, plain_draw = TorchGenerator(29), TorchGenerator(29)
    fast_draw.words(skip)
    plain_draw.words(skip)
    for p in (0.8, 0.1, 1.0, 0.0):
        threshold = bernoulli_threshold(p)
        np.testing.assert_array_equal(streams.keep_below(fast_draw._bits, threshold, n),
                                      keep_below(plain_draw._bits, threshold, n))
        assert fast_draw.words(3).tolist() == plain_draw.words(3).tolist()      # the streams stand at one place
    a, b = TorchGenerator(8), TorchGenerator(8)
    with fast.enabled(False):
        want = b.bernoulli(0.8, (3, n))
    np.testing.assert_array_equal(a.bernoulli(0.8, (3, n)), want)                 # through the dispatch
    assert a.get_state().tobytes() == b.get_state().tobytes()


def test_compiled_bernoulli_steps_aside_when_the_kernels_are_off(monkeypatch):
    """TINYGRAD_LIKE_KERNELS=off: fast/streams.py's keep_below runs the plain draw."""
    from tinygrad_like.fast import streams
    called = []
    monkeypatch.setattr(streams, "plain_keep_below", lambda *args: called.append(args[1:]) or "plain")
    monkeypatch.setenv("TINYGRAD_LIKE_KERNELS", "off")
    assert streams.keep_below(np.random.MT19937(1), 2 ** 52, 10_000) == "plain"
    assert called == [(2 ** 52, 10_000)]

"""fast/streams.py's compiled bernoulli draw (kernels/twister.c, with kernels/numba_twister.py behind it) is the
plain draw bit for bit: the same mask and the same dropout noise, and the stream left at the same place, from
every position in a block of 624 words, for every size (0, 1, a block's worth of pairs and one either side,
many blocks); the draws of every other kind from the same generator see the words they see without it;
without a compiler the numba twister runs, without numba the plain draw; and against PyTorch's own
dropout, live, where PyTorch is installed. The plain draw is checked against PyTorch's numbers in
tests/test_torch_generator.py."""
from __future__ import annotations

import numpy as np
import pytest

from tinygrad_like import fast
from tinygrad_like.fast import streams
from tinygrad_like.fast.kernels.switch import numba_importable
from tinygrad_like.pytorch_streams.generator import TorchGenerator, bernoulli_threshold, keep_below, keep_below_scaled

needs_c = pytest.mark.skipif(streams.twister_library() is None, reason=f"twister.c does not build: {streams.reason()}")
needs_numba = pytest.mark.skipif(not numba_importable(), reason="the compiled draws run with the `fast` extra (numba)")

SKIPS = [0, 1, 5, 622, 623, 624, 625, 1247, 1248]           # words drawn before: any place in a block
SIZES = [0, 1, 2, 311, 312, 313, 623, 624, 625, 1000, 5001]  # draws: a block is 312 pairs
PROBABILITIES = [0.8, 0.1, 1.0, 0.0, 0.5]


def c_draw(bits, threshold: int, n: int, scale=None) -> np.ndarray:
    """twister.c's draw of any size (fast/streams.py takes the plain draw below MIN_DRAWS)."""
    lib = streams.twister_library()
    if scale is None:
        out = np.empty(n, dtype=bool)
        streams._advance(bits, lambda state: lib.twister_keep_below(state, threshold, out.ctypes.data, n))
        return out
    name, c_scale = streams.NOISE[scale.dtype]
    out = np.empty(n, dtype=scale.dtype)
    streams._advance(bits, lambda state: getattr(lib, name)(state, threshold, c_scale(scale), out.ctypes.data, n))
    return out


def same_state(a: TorchGenerator, b: TorchGenerator) -> None:
    sa, sb = a._bits.state["state"], b._bits.state["state"]
    assert sa["pos"] == sb["pos"]
    np.testing.assert_array_equal(sa["key"], sb["key"])


@needs_c
@pytest.mark.parametrize("skip", SKIPS)
@pytest.mark.parametrize("scale", [None, np.float32(1.25), np.float64(1 / 0.7)])
@pytest.mark.parametrize("in_place", [True, False])
def test_c_draw_is_the_plain_draw(skip, scale, in_place, monkeypatch):
    """The mask, or the noise in float32 or float64, and the twister's state after, equal the plain draw's, on
    numpy's state in place and on a copy of its public state (where the layout would not be numpy's)."""
    assert streams._layout_holds()                                # on this numpy; else the copy path runs
    monkeypatch.setattr(streams, "_layout_holds", lambda: in_place)
    fast_draw, plain_draw = TorchGenerator(29), TorchGenerator(29)
    fast_draw.words(skip)
    plain_draw.words(skip)
    for n in SIZES:
        for p in PROBABILITIES:
            threshold = bernoulli_threshold(p)
            got = c_draw(fast_draw._bits, threshold, n, scale)
            want = keep_below(plain_draw._bits, threshold, n) if scale is None else \
                keep_below_scaled(plain_draw._bits, threshold, n, scale)
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), (skip, n, p)
            same_state(fast_draw, plain_draw)


@needs_c
def test_c_draw_on_the_threshold_itself():
    """k = T − 1 is kept and k = T is not: the thresholds at the draws' own 53-bit integers, and the largest."""
    ks = TorchGenerator(3)._bits53(2000)                       # the draws' integers, from numpy's twister
    for k in (int(ks[0]), int(ks[1999]), int(ks[700]), 2 ** 53 - 1, 2 ** 53, 1, 0):
        for threshold in (k, k + 1):
            kept = c_draw(TorchGenerator(3)._bits, threshold, 2000)
            np.testing.assert_array_equal(kept, ks < threshold)
    assert c_draw(TorchGenerator(3)._bits, int(ks[700]) + 1, 2000)[700]
    assert not c_draw(TorchGenerator(3)._bits, int(ks[700]), 2000)[700]


@needs_c
def test_c_words_are_numpys_words():
    """twister.c's twist and temper by themselves: the words numpy's MT19937 hands out, from any position."""
    lib = streams.twister_library()
    for skip in (0, 7, 623, 624):
        ours, numpys = TorchGenerator(5), TorchGenerator(5)
        ours.words(skip)
        numpys.words(skip)
        words = np.empty(3001, dtype=np.uint32)
        streams._advance(ours._bits, lambda state, out=words: lib.twister_words(state, out.ctypes.data, 3001))
        np.testing.assert_array_equal(words, numpys.words(3001))
        same_state(ours, numpys)


CONSUMERS = [
    ("bernoulli", lambda g: g.bernoulli(0.8, (7, 333))),
    ("noise32", lambda g: g.bernoulli_scaled(0.8, (4097,), np.float32(1) / np.float32(0.8))),
    ("noise64", lambda g: g.bernoulli_scaled(0.3, (3, 1001), np.float64(1) / np.float64(0.3))),
    ("noise16", lambda g: g.bernoulli_scaled(0.5, (999,), np.float16(2))),
    ("small", lambda g: g.bernoulli(0.5, (11,))),
    ("randint", lambda g: g.integers(0, 10, (13,))),
    ("randint64", lambda g: g.integers(0, 2 ** 40, (5,))),
    ("randperm", lambda g: g.permutation(9)),
    ("normal", lambda g: g.normal((5, 17))),
    ("normal_small", lambda g: g.normal((3,), np.float64)),
    ("uniform", lambda g: g.uniform((7,), np.float64)),
    ("state", lambda g: g.get_state()),
]


@needs_c
@needs_numba
@pytest.mark.parametrize("start", [0, 1, 311])
def test_every_draw_sees_its_words_between_compiled_draws(start, monkeypatch):
    """Draws of every kind, interleaved with the compiled ones, a state saved, restored and reseeded between:
    every number and every state equals the same program's with the fast path off."""
    monkeypatch.delenv("TINYGRAD_LIKE_KERNELS", raising=False)
    assert streams.variant(2 ** 52, 4097) == "c"
    def program(g: TorchGenerator) -> list:
        out = [g.words(start)]
        for round_ in range(3):
            for _, draw in CONSUMERS[round_:] + CONSUMERS[:round_]:
                out.append(draw(g))
            saved = g.get_state()
            first = g.bernoulli(0.9, (2000,))
            g.set_state(saved)
            again = g.bernoulli(0.9, (2000,))
            assert first.tobytes() == again.tobytes()              # the restored state draws the same mask
            out += [first, g.get_state()]
        g.manual_seed(12)
        out += [g.bernoulli_scaled(0.5, (700,), np.float32(2)), g.get_state()]
        return out
    got = program(TorchGenerator(17))
    with fast.enabled(False):
        want = program(TorchGenerator(17))
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@needs_c
@needs_numba
def test_the_fast_path_takes_the_c_draw(monkeypatch):
    """With the kernels on and a compiler, the draw is twister.c's; TINYGRAD_LIKE_KERNELS chooses numba or none."""
    monkeypatch.delenv("TINYGRAD_LIKE_KERNELS", raising=False)
    assert streams.variant(2 ** 52, streams.MIN_DRAWS) == "c"
    assert streams.variant(2 ** 52, streams.MIN_DRAWS - 1) == "plain"
    assert streams.variant(2 ** 53 + 1, 10 ** 6) == "plain"                  # not a threshold of a probability
    monkeypatch.setenv("TINYGRAD_LIKE_KERNELS", "numba")
    assert streams.variant(2 ** 52, 10 ** 6) == "numba"
    monkeypatch.setenv("TINYGRAD_LIKE_KERNELS", "off")
    assert streams.variant(2 ** 52, 10 ** 6) == "plain"


@needs_numba
@pytest.mark.parametrize("why", ["no compiler", "build fails"])
def test_without_twister_c_the_numba_twister_draws_the_same(why, monkeypatch, tmp_path):
    """No C compiler, or one that fails: the numba twister runs, draws the plain bits, and reason() says why."""
    monkeypatch.delenv("TINYGRAD_LIKE_KERNELS", raising=False)
    if why == "no compiler":
        monkeypatch.setattr(streams.c_build, "compiler", lambda: None)
    else:
        bad = tmp_path / "cc"
        bad.write_text("#!/bin/sh\necho 'this compiler refuses everything' >&2\nexit 1\n")
        bad.chmod(0o755)
        monkeypatch.setenv("CC", str(bad))
        monkeypatch.setenv("TINYGRAD_LIKE_CACHE_DIR", str(tmp_path / "cache"))
    streams.twister_library.cache_clear()
    try:
        assert streams.twister_library() is None
        assert ("no C compiler" if why == "no compiler" else "refuses everything") in streams.reason()
        assert streams.variant(2 ** 52, 5001) == "numba"
        fast_draw, plain_draw = TorchGenerator(9), TorchGenerator(9)
        for n in (5001, 624, 777):
            scale = np.float32(1.25)
            got = fast_draw.bernoulli_scaled(0.8, (n,), scale)
            with fast.enabled(False):
                want = plain_draw.bernoulli_scaled(0.8, (n,), scale)
            assert got.tobytes() == want.tobytes()
            np.testing.assert_array_equal(fast_draw.bernoulli(0.3, (n,)), keep_below(plain_draw._bits,
                                                                                     bernoulli_threshold(0.3), n))
        same_state(fast_draw, plain_draw)
    finally:
        streams.twister_library.cache_clear()


def test_without_numba_the_plain_draw_runs(monkeypatch):
    """The fast extra's kernels are off without numba (kernels/switch.py): so is twister.c, as rows.c is."""
    monkeypatch.delenv("TINYGRAD_LIKE_KERNELS", raising=False)
    monkeypatch.setattr(streams, "numba_importable", lambda: False)
    assert streams.variant(2 ** 52, 10 ** 6) == "plain"


@pytest.mark.parametrize("n", [512, 4097, 98_305])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dropout_is_pytorchs_live(n, dtype, monkeypatch):
    """nn.functional.dropout on tinygrad_like.torch zeroes and scales PyTorch's entries at the same seed, twice
    in a row (the second from mid-block), and leaves PyTorch's generator state."""
    torch = pytest.importorskip("torch", reason="compares with PyTorch's own dropout; the plain draw is checked "
                                                "against PyTorch's stored numbers without it")
    import tinygrad_like.torch as facade
    from tinygrad_like import Tensor
    monkeypatch.delenv("TINYGRAD_LIKE_KERNELS", raising=False)
    try:
        results = []
        for T in (facade, torch):
            T.manual_seed(1234)
            x = T.ones(n, dtype=getattr(T, dtype)) * 3
            results.append([T.nn.functional.dropout(x, 0.2).numpy(), T.nn.functional.dropout(x[:n - 1], 0.45).numpy(),
                            np.asarray(T.get_rng_state()).astype(np.uint8)])
        for ours, theirs in zip(*results):
            assert ours.dtype == theirs.dtype and ours.tobytes() == theirs.tobytes()
    finally:
        Tensor.manual_seed(0)                # the library back on the engine's own stream


@pytest.mark.parametrize("p", [1.5, -0.5, float("nan")])
def test_noise_of_a_probability_outside_0_1_is_bernoullis(p):
    """bernoulli_scaled outside [0, 1] (no threshold exists) takes bernoulli's float path: u < p on 53-bit
    uniforms, so every entry kept (p > 1) or none (p < 0, NaN), and 2n words drawn all the same."""
    g, words = TorchGenerator(4), TorchGenerator(4)
    noise = g.bernoulli_scaled(p, (3, 700), np.float32(2))
    assert noise.dtype == np.float32 and noise.shape == (3, 700)
    assert (noise == (2 if p > 1 else 0)).all()
    words.words(2 * 3 * 700)
    same_state(g, words)

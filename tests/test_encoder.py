"""models.encoder.Encoder: bidirectional states and mean-pooled, L2-normalised sentence embeddings.

The pooled reference is numpy over the encoder's own token states (np.linalg.norm, a masked mean);
"padding does not change the embedding" is checked against the same sentence run unpadded.
"""
import numpy as np
import pytest

from models.arithmetic import count_params, named_shapes
from models.encoder import Encoder
from models.gpt import GPT, GPTConfig
from tinygrad_like import Tensor, gradcheck

V = 31


def config(**overrides):
    return GPTConfig(**{**dict(vocab_size=V, block_size=12, n_layer=2, n_head=4, n_embd=32, causal=False),
                        **overrides})


def encoder(seed=0, **overrides):
    Tensor.manual_seed(seed)
    return Encoder(config(**overrides))


def ids(B, T, seed=0):
    return np.random.default_rng(seed).integers(0, V, (B, T))


MASK = np.array([[1, 1, 1, 1, 1, 1, 1],
                 [1, 1, 1, 1, 0, 0, 0],
                 [1, 1, 0, 0, 0, 0, 0]])


@pytest.mark.parametrize("overrides", [{}, dict(prenorm=False), dict(pos="rope", norm="rmsnorm", mlp="swiglu"),
                                       dict(n_expert=3, top_k=1)])
def test_embeddings_are_unit_mean_pooled_states(overrides):
    e = encoder(**overrides)
    x = ids(3, 7)
    emb = e.embed(x, MASK).numpy()
    assert emb.shape == (3, 32)
    np.testing.assert_allclose(np.linalg.norm(emb, axis=-1), 1, rtol=1e-6)
    states = e(x, MASK).numpy()                                        # (B, T, C)
    assert states.shape == (3, 7, 32)
    assert (states[1, 4:] == 0).all() and (states[2, 2:] == 0).all()   # padding states are zero
    for b, n in enumerate(MASK.sum(1)):
        mean = states[b, :n].mean(0)
        np.testing.assert_allclose(emb[b], mean / np.linalg.norm(mean), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("overrides", [{}, dict(pos="rope")])
def test_padding_does_not_change_the_embedding(overrides):
    e = encoder(**overrides)
    x = ids(3, 7)
    padded = e.embed(x, MASK).numpy()
    for b, n in enumerate(MASK.sum(1)):
        alone = e.embed(x[b:b + 1, :n]).numpy()[0]                     # the sentence with no padding at all
        np.testing.assert_allclose(padded[b], alone, rtol=1e-5, atol=1e-6)
    other_pad = np.where(MASK == 1, x, 5)                              # what sits in the padding is irrelevant
    np.testing.assert_allclose(e.embed(other_pad, MASK).numpy(), padded, rtol=1e-5, atol=1e-6)


def test_every_token_sees_the_whole_input():
    e = encoder()
    a = ids(1, 6)
    b = a.copy()
    b[0, -1] = (b[0, -1] + 1) % V
    assert np.abs(e(a).numpy()[0, 0] - e(b).numpy()[0, 0]).max() > 1e-4     # the first token sees the last
    Tensor.manual_seed(0)
    gpt = GPT(config(causal=True))                                           # unlike the causal GPT
    np.testing.assert_array_equal(gpt(a)[0].numpy()[0, 0], gpt(b)[0].numpy()[0, 0])


def test_config_is_made_bidirectional_and_parameters_match_arithmetic():
    e = Encoder(config(causal=True))
    assert e.config.causal is False and all(not blk.attn.causal for blk in e.transformer.h)
    cfg = config(prenorm=False)
    e = Encoder(cfg)
    expected = {n: s for n, s in named_shapes(cfg) if n != "lm_head.weight"}   # an encoder has no head
    assert {n: p.shape for n, p in e.named_parameters()} == expected
    assert e.num_params() == count_params(cfg)                                 # tied: lm_head not counted


def test_attention_maps_are_full():
    maps = encoder().attention_maps(ids(2, 5))
    assert len(maps) == 2 and maps[0].shape == (2, 4, 5, 5)
    assert (maps[0] > 0).all()                                                 # no masked entries
    np.testing.assert_allclose(maps[1].sum(-1), 1, atol=1e-6)


def test_gradcheck_embed_with_padding_float64():
    cfg = GPTConfig(vocab_size=7, block_size=4, n_layer=1, n_head=2, n_embd=4, mlp_hidden=4, causal=False,
                    dtype="float64")
    Tensor.manual_seed(2)
    e = Encoder(cfg)
    rng = np.random.default_rng(0)
    for p in e.parameters():
        p.data[...] = rng.normal(0, 0.5, p.shape)
    x = np.array([[1, 2, 3, 4], [5, 6, 0, 0]])
    mask = np.array([[1, 1, 1, 1], [1, 1, 0, 0]])
    assert gradcheck(lambda *ps: e.embed(x, mask), *e.parameters())


@pytest.mark.parametrize("mask, match", [
    (np.ones((3, 6)), "shape"),
    (np.where(MASK == 1, 2, 0), "only 1"),
    (np.array([[1] * 7, [1, 0, 1, 0, 0, 0, 0], [1] * 7]), "right-padded"),
    (np.array([[1] * 7, [0] * 7, [1] * 7]), "row 1 .* no tokens"),
])
def test_bad_masks(mask, match):
    with pytest.raises(ValueError, match=match):
        encoder().embed(ids(3, 7), mask)


def test_bad_ids():
    with pytest.raises(ValueError, match="longer than block_size"):
        encoder()(ids(1, 13))
    with pytest.raises(TypeError, match="Encoder: idx must hold integer"):
        encoder()(np.zeros((1, 3)))

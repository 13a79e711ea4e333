"""nn.MultiheadAttention, the Transformer family and F.multi_head_attention_forward (issue 26) against PyTorch:
the same weights (PyTorch's state_dict loaded as it is), the same inputs in float64, eval mode: outputs,
attention weights and every gradient equal (skipped without PyTorch); the same initial weights under the same
seed; dropout in training mode by its law; bad shapes refused.
"""
import numpy as np
import pytest

import tinygrad_like.torch as tl

rng = np.random.default_rng(5)
pytestmark = [pytest.mark.filterwarnings("ignore:enable_nested_tensor is True"),       # PyTorch's, about its
              pytest.mark.filterwarnings("ignore:Support for mismatched key_padding_mask")]  # fast path


def pair(torch, make):
    """The same layer on both sides: PyTorch's, in float64 and eval mode, and ours with its state_dict."""
    torch.manual_seed(0)
    theirs = make(torch.nn).double().eval()
    ours = make(tl.nn).double().eval()
    ours.load_state_dict(theirs.state_dict())
    return theirs, ours


def run(torch, module, arrays, masks=None, **kwargs):
    """module(*tensors, **masks, **kwargs) and the gradients of Σ output·seed for every input and parameter."""
    tensors = [(torch.tensor if module.__module__.startswith("torch") else tl.tensor)(a, requires_grad=True)
               for a in arrays]
    to = torch.tensor if module.__module__.startswith("torch") else tl.tensor
    given = {k: None if v is None else to(v) for k, v in (masks or {}).items()}
    out = module(*tensors, **given, **kwargs)
    first = out[0] if isinstance(out, tuple) else out
    seed = np.linspace(-1, 1, first.numel()).reshape(tuple(first.shape))
    (first * to(seed)).sum().backward()
    params = {n: p.grad.numpy() for n, p in module.named_parameters()}
    return out, [t.grad.numpy() for t in tensors], params


def check(torch, make, arrays, masks=None, **kwargs):
    theirs, ours = pair(torch, make)
    t_out, t_grads, t_params = run(torch, theirs, arrays, masks, **kwargs)
    o_out, o_grads, o_params = run(torch, ours, arrays, masks, **kwargs)
    t_out, o_out = (t_out if isinstance(t_out, tuple) else (t_out,)), (o_out if isinstance(o_out, tuple) else (o_out,))
    for o, t in zip(o_out, t_out):
        assert (o is None) == (t is None)
        if t is not None:
            np.testing.assert_allclose(o.numpy(), t.detach().numpy(), rtol=1e-9, atol=1e-12)
    for o, t in zip(o_grads, t_grads):
        np.testing.assert_allclose(o, t, rtol=1e-9, atol=1e-12)
    assert list(o_params) == list(t_params)
    for name in t_params:
        np.testing.assert_allclose(o_params[name], t_params[name], rtol=1e-9, atol=1e-12, err_msg=name)


L, S, N, E = 4, 5, 2, 6
Q, K, V = rng.standard_normal((L, N, E)), rng.standard_normal((S, N, E)), rng.standard_normal((S, N, E))
CAUSAL = np.triu(np.ones((L, L), dtype=bool), 1)
PADDING = np.array([[False, False, False, True, True], [False] * 5])
FLOAT_MASK = rng.standard_normal((L, S))


@pytest.mark.parametrize("name, make, arrays, masks, kwargs", [
    ("self", lambda nn: nn.MultiheadAttention(E, 2), (Q, Q, Q), None, {}),
    ("cross padding", lambda nn: nn.MultiheadAttention(E, 3), (Q, K, V), {"key_padding_mask": PADDING}, {}),
    ("causal bool per head", lambda nn: nn.MultiheadAttention(E, 2), (Q, Q, Q),
     {"attn_mask": np.broadcast_to(CAUSAL, (N * 2, L, L)).copy()}, {"average_attn_weights": False}),
    ("float mask bias_kv zero_attn", lambda nn: nn.MultiheadAttention(E, 2, add_bias_kv=True, add_zero_attn=True),
     (Q, K, V), {"attn_mask": FLOAT_MASK, "key_padding_mask": PADDING}, {}),
    ("kdim vdim no bias", lambda nn: nn.MultiheadAttention(E, 2, kdim=3, vdim=7, bias=False),
     (Q, K[..., :3], rng.standard_normal((S, N, 7))), None, {"need_weights": False}),
    ("batch first", lambda nn: nn.MultiheadAttention(E, 2, batch_first=True),
     (Q.transpose(1, 0, 2), K.transpose(1, 0, 2), V.transpose(1, 0, 2)), None, {}),
    ("unbatched", lambda nn: nn.MultiheadAttention(E, 2), (Q[:, 0], K[:, 0], V[:, 0]), None, {}),
], ids=lambda v: v if isinstance(v, str) else "")
def test_multihead_attention_matches_pytorch(name, make, arrays, masks, kwargs):
    torch = pytest.importorskip("torch", reason="compares against PyTorch")
    check(torch, make, arrays, masks, **kwargs)


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_transformer_encoder_matches_pytorch(norm_first, activation):
    torch = pytest.importorskip("torch", reason="compares against PyTorch")

    def make(nn):
        layer = nn.TransformerEncoderLayer(E, 2, dim_feedforward=8, activation=activation, norm_first=norm_first,
                                           batch_first=True)
        return nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(E))
    check(torch, make, (Q.transpose(1, 0, 2),), {"mask": CAUSAL, "src_key_padding_mask": PADDING[:, :L]})


@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_matches_pytorch(norm_first):
    torch = pytest.importorskip("torch", reason="compares against PyTorch")

    def make(nn):
        return nn.Transformer(E, 2, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=8,
                              norm_first=norm_first)
    tgt_mask = tl.nn.Transformer.generate_square_subsequent_mask(L, dtype=np.float64).numpy()
    check(torch, make, (K, Q), {"tgt_mask": tgt_mask, "src_key_padding_mask": PADDING,
                                "memory_key_padding_mask": PADDING})


def test_initial_weights_equal_pytorchs_under_the_same_seed():
    torch = pytest.importorskip("torch", reason="compares against PyTorch")
    for make in (lambda nn: nn.MultiheadAttention(E, 2, add_bias_kv=True),
                 lambda nn: nn.MultiheadAttention(E, 2, kdim=3, vdim=4),
                 lambda nn: nn.TransformerDecoderLayer(E, 3, dim_feedforward=8),
                 lambda nn: nn.Transformer(E, 2, 1, 1, 8)):
        torch.manual_seed(0)
        theirs = make(torch.nn).state_dict()
        tl.manual_seed(0)
        ours = make(tl.nn).state_dict()
        assert list(ours) == list(theirs)
        for key in theirs:
            np.testing.assert_array_equal(ours[key], theirs[key].numpy(), err_msg=key)


def test_attention_dropout_trains_and_evaluation_is_deterministic():
    attn = tl.nn.MultiheadAttention(E, 2, dropout=0.5).double()
    x = tl.tensor(Q)
    _, w1 = attn(x, x, x)
    out1, out2 = attn(x, x, x)[0], attn(x, x, x)[0]
    assert not np.allclose(out1.numpy(), out2.numpy())                 # weights dropped at random while training
    np.testing.assert_allclose(w1.numpy().sum(-1), 1)                  # the weights returned are before dropout
    attn.eval()
    assert np.array_equal(attn(x, x, x)[0].numpy(), attn(x, x, x)[0].numpy())
    mask = tl.nn.Transformer.generate_square_subsequent_mask(3)
    assert mask.tolist() == [[0, -np.inf, -np.inf], [0, 0, -np.inf], [0, 0, 0]]


def test_bad_shapes_are_refused_with_the_shapes():
    with pytest.raises(ValueError, match="embed_dim 6 must be divisible by num_heads 4"):
        tl.nn.MultiheadAttention(6, 4)
    attn = tl.nn.MultiheadAttention(E, 2)
    with pytest.raises(ValueError, match="query \\(4, 2, 5\\) must be \\(L, N, E\\) with E = embed_dim_to_check = 6"):
        attn(tl.zeros(4, 2, 5), tl.zeros(4, 2, 5), tl.zeros(4, 2, 5))
    with pytest.raises(ValueError, match="key_padding_mask \\(2, 4\\) must be \\(N, S\\) = \\(2, 5\\)"):
        attn(tl.zeros(4, 2, 6), tl.zeros(5, 2, 6), tl.zeros(5, 2, 6), key_padding_mask=tl.zeros(2, 4, dtype=tl.bool))
    with pytest.raises(ValueError, match="activation must be 'relu', 'gelu' or a function"):
        tl.nn.TransformerEncoderLayer(E, 2, activation="tanh")

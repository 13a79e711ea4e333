"""The worked example of ../shared/seeds/000_*.txt ("fund pays it", d = 2), step by step with this
engine's ops, then through scaled_dot_product_attention. Every expected number is the chapter's
(rounded to 3 decimals there, so compared to within 5e-4)."""
import numpy as np
import pytest

from tinygrad_like import Tensor, gradcheck

TOL = 5e-4
X = Tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])        # x1 "fund", x2 "pays", x3 "it" (rows)
W_Q = Tensor([[1.0, 0.0], [1.0, 1.0]])
W_K = Tensor.eye(2)
W_V = Tensor([[1.0, 0.0], [0.0, 2.0]])


def close(t, expected, tol=TOL):
    np.testing.assert_allclose(t.numpy(), expected, atol=tol, rtol=0)


def test_projections_scores_softmax_and_output_for_token_3():
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    close(Q, [[1, 0], [1, 1], [2, 1]], 0)                 # step 1: queries, keys, values
    close(K, [[1, 0], [0, 1], [1, 1]], 0)
    close(V, [[1, 0], [0, 2], [1, 2]], 0)
    scores = Q[2] @ K.T
    close(scores, [2, 1, 3], 0)                           # step 2: q3 · k1, k2, k3
    scaled = scores / np.sqrt(2.0)
    close(scaled, [1.414, 0.707, 2.121])                  # step 3: divide by √2
    close(scaled.exp(), [4.113, 2.028, 8.342], 2e-3)      # step 4: e^…, sum 14.484, weights
    assert scaled.exp().sum().item() == pytest.approx(14.484, abs=2e-3)
    weights = scaled.softmax()
    close(weights, [0.284, 0.140, 0.576])
    out = weights @ V
    close(out, [0.860, 1.432])                            # step 5: mix the values


def test_causal_mask_tokens_1_and_2():
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    scores = Q @ K.T / np.sqrt(2.0)                       # (3, 3): row i = token i's query
    future = np.triu(np.ones((3, 3), dtype=bool), k=1)   # key j > query i is the future
    weights = scores.masked_fill(Tensor(future), -np.inf).softmax(-1)
    close(weights[0], [1, 0, 0], 1e-12)                   # token 1 sees only itself
    close(weights[1], [0.5, 0.5, 0], 1e-12)               # token 2: scores 1 and 1
    out = weights @ V
    close(out[0], [1.0, 0.0], 1e-12)
    close(out[1], [0.5, 1.0], 1e-12)
    close(out[2], [0.860, 1.432])                         # token 3 sees all three, as before


def test_mlp_hidden_layer():
    attn = Tensor([0.860, 1.432])
    W1 = Tensor([[1.0, 0.0, 1.0, -1.0], [0.0, 1.0, -1.0, 1.0]])  # columns (1,0), (0,1), (1,-1), (-1,1)
    pre = attn @ W1
    close(pre, [0.860, 1.432, -0.572, 0.572], 1e-6)
    close(pre.relu(), [0.860, 1.432, 0.0, 0.572], 1e-6)
    assert W1.shape == (2, 4) and pre.shape == (4,)


@pytest.mark.parametrize("batch", [(), (2,)])
def test_through_scaled_dot_product_attention(batch):
    Q, K, V = (Tensor(np.broadcast_to((X @ W).numpy(), batch + (3, 2)).copy()) for W in (W_Q, W_K, W_V))
    out, weights = Q.scaled_dot_product_attention(K, V, return_weights=True)
    assert out.shape == batch + (3, 2) and weights.shape == batch + (3, 3)
    close(weights[..., 2, :], np.broadcast_to([0.284, 0.140, 0.576], batch + (3,)))
    close(out[..., 2, :], np.broadcast_to([0.860, 1.432], batch + (2,)))
    causal = Q.scaled_dot_product_attention(K, V, is_causal=True)
    close(causal[..., 0, :], np.broadcast_to([1.0, 0.0], batch + (2,)), 1e-6)
    close(causal[..., 1, :], np.broadcast_to([0.5, 1.0], batch + (2,)), 1e-6)
    close(causal[..., 2, :], np.broadcast_to([0.860, 1.432], batch + (2,)))
    # the same mask given as booleans (True = may attend), and as an additive float mask
    allowed = np.tril(np.ones((3, 3), dtype=bool))
    close(Q.scaled_dot_product_attention(K, V, attn_mask=allowed), causal.numpy(), 1e-6)
    additive = Tensor(np.where(allowed, 0.0, -np.inf))
    close(Q.scaled_dot_product_attention(K, V, attn_mask=additive), causal.numpy(), 1e-6)


def test_the_example_gradchecks_through_the_projection_matrices():
    x = Tensor(X.numpy().astype(np.float64))
    ws = [Tensor(W.numpy().astype(np.float64), requires_grad=True) for W in (W_Q, W_K, W_V)]

    def attention(wq, wk, wv):
        return (x @ wq).scaled_dot_product_attention(x @ wk, x @ wv, is_causal=True)
    assert gradcheck(attention, *ws)

"""Attention by hand: the chapter's three-token example ("fund pays it", d = 2), step by step with
the engine's Tensor ops, printing the same numbers as the text; then its forward and backward graphs.

What it teaches: attention is five small steps (project, score, scale, softmax, mix), each an
ordinary tensor op; the causal mask is one masked_fill with -inf before the softmax; the MLP after it
works on each token alone. Because every step is a Tensor op, the engine can also differentiate the
whole thing and draw how the gradient flows back to W_Q, W_K and W_V.

Run:  python demos/attention_by_hand.py [--out DIR]      (default out/attention_by_hand/)
Writes attention_forward.svg (token 3's output, with values) and attention_backward.svg (the
gradient of the sum of token 3's output, flowing back to W_Q, W_K, W_V, with gradient norms).
"""
from __future__ import annotations

import math

import numpy as np

import _common
from _common import named
from tinygrad_like import Tensor, draw_graph, scope

TOKENS = ["fund", "pays", "it"]


def fmt(values) -> str:
    """(0.860, 1.432): the chapter's three decimals."""
    return "(" + ", ".join(f"{v:.3f}" for v in np.ravel(values)) + ")"


def forward() -> dict:
    """The five steps on the chapter's numbers, as named Tensor ops; returns every intermediate by name."""
    x = Tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], name="x")                  # (T=3, d=2), one row per token
    W_Q = Tensor([[1.0, 0.0], [1.0, 1.0]], requires_grad=True, name="W_Q")       # (d, d)
    W_K = Tensor([[1.0, 0.0], [0.0, 1.0]], requires_grad=True, name="W_K")       # the identity
    W_V = Tensor([[1.0, 0.0], [0.0, 2.0]], requires_grad=True, name="W_V")
    with scope("project"):                           # rows times matrices: q = x W_Q, ...
        q = named(x @ W_Q, "q")                       # (3, 2)
        k = named(x @ W_K, "k")                       # (3, 2)
        v = named(x @ W_V, "v")                       # (3, 2)
    with scope("score"):
        scores = named(q @ k.T, "scores")             # (3, 3): row i = token i's query against every key
    with scope("scale"):
        scaled = named(scores / math.sqrt(2), "scaled")  # (3, 3), divided by sqrt(d) = 1.414
    with scope("softmax"):                            # written out: exp, then divide by the row sum
        e = named(scaled.exp(), "exp")                # (3, 3)
        total = named(e.sum(axis=-1, keepdim=True), "sum")  # (3, 1)
        weights = named(e / total, "weights")         # (3, 3), every row sums to 1
    with scope("mix"):
        mixed = named(weights @ v, "out")             # (3, 2): each row a weighted mix of the values
    y = named(mixed[2], "token 3 out")                # (2,)
    return dict(x=x, W_Q=W_Q, W_K=W_K, W_V=W_V, q=q, k=k, v=v, scores=scores, scaled=scaled, e=e, total=total,
                weights=weights, mixed=mixed, y=y)


def token3_loss() -> Tensor:
    """The scalar the demo differentiates: the sum of token 3's output, through all five steps."""
    return named(forward()["y"].sum(), "loss")


def main(argv=None) -> dict:
    args = _common.parser("attention_by_hand", __doc__.splitlines()[0]).parse_args(argv)
    out = _common.out_dir(args.out)
    r = {}

    # ---------------------------------------------------------------- the chapter's numbers
    f = forward()
    x, W_Q, W_K, W_V, q, k, v = (f[name] for name in ("x", "W_Q", "W_K", "W_V", "q", "k", "v"))
    scores, scaled, e, total, weights, mixed, y = (f[name] for name in
                                                   ("scores", "scaled", "e", "total", "weights", "mixed", "y"))
    print("Embeddings (one row per token):", ", ".join(f"{w} {fmt(row)}" for w, row in zip(TOKENS, x.numpy())))
    print("\n1. Project")
    for label, t in (("queries", q), ("keys", k), ("values", v)):
        print(f"   {label:8s}", ", ".join(fmt(row) for row in t.numpy()))
    r.update(q=q.numpy().copy(), k=k.numpy().copy(), v=v.numpy().copy())
    print("\n2. Score token 3 ('it') against every key: q3 . k1, q3 . k2, q3 . k3 =",
          ", ".join(f"{s:g}" for s in scores.numpy()[2]))
    print("3. Scale by sqrt(2) = 1.414:", fmt(scaled.numpy()[2]).strip("()"))
    print("4. Softmax: e^s =", fmt(e.numpy()[2]).strip("()"), f"; the sum is {total.numpy()[2, 0]:.3f}",
          "; the weights are", fmt(weights.numpy()[2]).strip("()"))
    print("5. Mix the values:", " + ".join(f"{w:.3f} x {fmt(val)}" for w, val in zip(weights.numpy()[2], v.numpy())),
          "=", fmt(y.numpy()))
    r.update(scores3=scores.numpy()[2].copy(), scaled3=scaled.numpy()[2].copy(), exp3=e.numpy()[2].copy(),
             exp_sum3=float(total.numpy()[2, 0]), weights3=weights.numpy()[2].copy(), out3=y.numpy().copy())

    library = q.scaled_dot_product_attention(k, v)    # the library's one-call version of steps 2-5
    print(f"   (the library's scaled_dot_product_attention gives the same rows: max difference "
          f"{np.abs(library.numpy() - mixed.numpy()).max():.1e})")

    # ---------------------------------------------------------------- the causal mask
    future = Tensor(np.triu(np.ones((3, 3), dtype=bool), k=1))  # (3, 3): True above the diagonal
    causal_w = scaled.masked_fill(future, -math.inf).softmax(-1)  # e^-inf = 0: no weight on later tokens
    causal_out = causal_w @ v                                     # (3, 2)
    print("\nThe causal mask (scores of later tokens set to -inf before the softmax):")
    for i in range(3):
        print(f"   token {i + 1} ({TOKENS[i]}): weights {fmt(causal_w.numpy()[i])}, "
              f"output {fmt(causal_out.numpy()[i])}")
    r.update(causal_weights=causal_w.numpy().copy(), causal_out=causal_out.numpy().copy())

    # ---------------------------------------------------------------- the MLP step, token 3 alone
    W_1 = Tensor([[1.0, 0.0, 1.0, -1.0],
                  [0.0, 1.0, -1.0, 1.0]], name="W_1")  # (d=2, hidden=4): columns (1,0), (0,1), (1,-1), (-1,1)
    # (4, 2): our choice, the text leaves the second matrix open
    W_2 = Tensor([[0.5, 0.0], [0.0, 0.5], [0.5, 0.0], [0.0, 0.5]], name="W_2")
    pre = y @ W_1                                     # (4,)
    hidden = pre.relu()                               # (4,)
    mlp_out = hidden @ W_2                            # (2,)
    stream = x[2] + y + mlp_out                       # residual stream: x3 + attention + MLP (no LayerNorm here)
    print("\nThe MLP step (d = 2, hidden 4) on token 3's attention output", fmt(y.numpy()))
    print("   hidden pre-activations:", fmt(pre.numpy()).strip("()"))
    print("   ReLU zeroes the negative one:", fmt(hidden.numpy()))
    print("   a second 4x2 matrix (ours: 0.5 x [[1,0],[0,1],[1,0],[0,1]]) narrows back:", fmt(mlp_out.numpy()))
    print(f"   added to the residual stream x3 + attention = {fmt(x[2].numpy() + y.numpy())}:", fmt(stream.numpy()))
    r.update(mlp_pre=pre.numpy().copy(), mlp_relu=hidden.numpy().copy(), mlp_out=mlp_out.numpy().copy(),
             stream3=stream.numpy().copy())

    # ---------------------------------------------------------------- graphs and gradients
    loss = named(y.sum(), "loss")                     # a scalar to differentiate: the sum of token 3's output
    loss.backward(retain_graph=True)                  # keep the graph, to draw it with gradient norms
    print("\nGradients of (sum of token 3's output):")
    for W in (W_Q, W_K, W_V):
        rows = np.array2string(W.grad.numpy(), precision=3, separator=", ").replace("\n", "")
        print(f"   d loss / d {W.name} = {rows}")
    r["grads"] = {W.name: W.grad.numpy().copy() for W in (W_Q, W_K, W_V)}

    print("\nGraphs:")
    r["files"] = {
        "forward": _common.save_graph(draw_graph(y, show_values=True), out / "attention_forward.svg"),
        "backward": _common.save_graph(draw_graph(loss, direction="backward", show_grads=True),
                                       out / "attention_backward.svg"),
    }
    return r


if __name__ == "__main__":
    main()

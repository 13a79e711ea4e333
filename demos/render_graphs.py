"""A gallery of computation graphs, forward and backward, from one neuron up to a transformer block.

What it teaches: every model here is the same few primitive ops wired together, and its backward
pass is a graph of the same kind, running the other way (`MulBackward`, `ExpBackward`, ...; each
edge carries the shape and the norm of the gradient it hands on). Modules name their scopes, so a
transformer block draws as boxes ln_1, attn, ln_2, mlp; parameters carry their dotted names. Because
backward rules are Tensor ops, the gradient itself can be a graph (create_graph=True): the last
picture is d/dx of Σ tanh(x), drawn as the ops that compute it.

The graphs are the ones training builds, with fused linear, softmax, layernorm, GELU and attention
ops, each opened (draw_graph's expand=True) into a dashed box holding its composed twin: the box is
labelled with the fused op, its contents show how it is built. `--fused` leaves them closed.

Two pages step through a backward pass one node at a time, in the engine's own order (open them in
a browser; previous / next or the arrow keys): neuron_backprop.html for the neuron and
attention_backprop.html for the chapter's three-token attention example (demos/attention_by_hand.py).

Run:  python demos/render_graphs.py [--out DIR] [--fused]        (default out/render_graphs/)
Writes NAME_forward.svg and NAME_backward.svg for neuron, mlp, softmax, attention_head and block,
grad_of_tanh.svg, neuron_backprop.html and attention_backprop.html; prints each file with its node
(or step) count.
"""
from __future__ import annotations

import math

import numpy as np

import _common
import attention_by_hand
import nn
from _common import named
from tinygrad_like import Tensor, backprop_steps, draw_graph, grad

# ---------------------------------------------------------------- the models


def neuron() -> Tensor:
    """tanh(w·x + b): one neuron with three inputs, as in micrograd."""
    x = Tensor([1.0, -2.0, 0.5], name="x")                         # (3,)
    w = Tensor([0.3, 0.1, -0.4], requires_grad=True, name="w")     # (3,)
    b = Tensor(0.2, requires_grad=True, name="b")                  # ()
    return ((w * x).sum() + b).tanh()                              # ()


class TwoLayerMLP(nn.Module):
    """x (B, 3) -> fc1 -> tanh -> fc2 -> (B, 2)."""

    def __init__(self):
        self.fc1 = nn.Linear(3, 4)
        self.fc2 = nn.Linear(4, 2)

    def forward(self, x: Tensor) -> Tensor:
        return self.fc2(self.fc1(x).tanh())


def mlp() -> Tensor:
    y = TwoLayerMLP()(named(Tensor.randn(5, 3), "x"))               # (5, 2)
    return (y * y).mean()                                          # a squared-error-like loss


def softmax() -> Tensor:
    """-log softmax(logits)[0], the softmax written out from primitives: max, subtract, exp, sum, divide.

    Subtracting the max changes nothing (softmax(x - c) = softmax(x)) but keeps exp from overflowing.
    So the gradient that reaches the max is 0 (up to round-off): the edge into MaxBackward shows ‖g‖ ≈ 0,
    which is why the library's Tensor.softmax detaches the max and skips that work.
    """
    logits = Tensor([2.0, 1.0, 0.1], requires_grad=True, name="logits")  # (3,)
    e = (logits - logits.max()).exp()                                    # (3,)
    p = e / e.sum()                                                      # (3,), sums to 1
    return -p[0].log()                                                   # cross-entropy for class 0


class Head(nn.Module):
    """One causal attention head (as in nanoGPT's lecture): x (B, T, C) -> (B, T, hs)."""

    def __init__(self, n_embd: int, head_size: int):
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)

    def forward(self, x: Tensor) -> Tensor:
        T, hs = x.shape[1], self.key.out_features
        k, q, v = self.key(x), self.query(x), self.value(x)            # (B, T, hs) each
        att = q @ k.transpose(-2, -1) * (1.0 / math.sqrt(hs))          # (B, T, T)
        future = Tensor(np.triu(np.ones((T, T), dtype=bool), k=1))     # (T, T): True above the diagonal
        att = att.masked_fill(future, -math.inf).softmax(-1)           # (B, T, T)
        return att @ v                                                 # (B, T, hs)


def attention_head() -> Tensor:
    return Head(8, 4)(named(Tensor.randn(1, 4, 8), "x")).sum()


def block() -> Tensor:
    """One pre-norm transformer block: x + attn(ln_1(x)), then + mlp(ln_2(x))."""
    x = named(Tensor.randn(1, 4, 8, requires_grad=True), "x")             # (B=1, T=4, C=8); its gradient too
    return nn.Block(8, n_head=2)(x).sum()                                  # scalar


GALLERY = [("neuron", neuron, True), ("mlp", mlp, False), ("softmax", softmax, False),
           ("attention_head", attention_head, False), ("block", block, False)]


def grad_of_tanh():
    """x.grad built with create_graph=True is a Tensor with a graph: (1 - tanh²x) made of ops."""
    x = Tensor([0.5, -1.0, 2.0], requires_grad=True, name="x")    # (3,)
    x.tanh().sum().backward(create_graph=True)
    g = x.grad                                                     # (3,) = 1 - tanh(x)²
    g.name = "x.grad"
    (gg,) = grad(g.sum(), [x], retain_graph=True)                  # the second derivative, through that graph
    print(f"  d/dx Σ tanh(x) = {np.round(g.numpy(), 4)}  (1 - tanh² = {np.round(1 - np.tanh(x.numpy()) ** 2, 4)})")
    print(f"  its own gradient: {np.round(gg.numpy(), 4)}  (-2 tanh (1 - tanh²) = "
          f"{np.round(-2 * np.tanh(x.numpy()) * (1 - np.tanh(x.numpy()) ** 2), 4)})")
    return g


def main(argv=None) -> dict:
    p = _common.parser("render_graphs", __doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--fused", action="store_true", help="leave the fused ops closed (one node each)")
    args = p.parse_args(argv)
    return gallery(args)


def gallery(args) -> dict:
    out = _common.out_dir(args.out)
    Tensor.manual_seed(args.seed)
    files = {}

    for name, build, values in GALLERY:
        print(f"{name}:")
        loss = build()                                             # a scalar
        loss.backward(retain_graph=True)                           # keep the graph to draw it with gradient norms
        for direction in ("forward", "backward"):
            g = draw_graph(loss, direction=direction, show_values=values, show_grads=direction == "backward",
                           expand=not args.fused)
            files[f"{name}_{direction}"] = {"path": _common.save_graph(g, out / f"{name}_{direction}.svg"),
                                            "nodes": _common.count_nodes(g)}

    print("grad_of_tanh (a gradient built with create_graph=True, drawn as a forward graph):")
    g = draw_graph(grad_of_tanh(), show_values=True)
    files["grad_of_tanh"] = {"path": _common.save_graph(g, out / "grad_of_tanh.svg"), "nodes": _common.count_nodes(g)}

    print("stepping through backprop (open the pages in a browser):")
    pages = [("neuron_backprop", named(neuron(), "out"), "One neuron, out = tanh(w·x + b): backprop step by step"),
             ("attention_backprop", attention_by_hand.token3_loss(),
              "Attention by hand (fund pays it, d = 2): backprop of the sum of token 3's output, step by step")]
    for name, loss, title in pages:
        path = backprop_steps(loss, out / f"{name}.html", title=title)   # runs loss.backward() itself
        steps = path.read_text(encoding="utf-8").count('<section class="frame"')
        print(f"  wrote {path}  ({steps} steps)")
        files[name] = {"path": path, "steps": steps}
    return files


if __name__ == "__main__":
    main()

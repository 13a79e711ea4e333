"""A tour of gradient checks: every engine op and every nn layer, analytic gradient against numeric.

What it teaches: backpropagation is only as good as each op's backward rule, and every rule can be
checked the same way. Nudge one input element by ±eps, see how much the output moves, divide:
    numeric = (L(x + eps) - L(x - eps)) / (2 eps)       (central difference, error ~ eps²)
and compare with the analytic gradient from backward. With float64 and eps = 1e-6 the two agree to
about 1e-9 for a correct rule; a wrong rule is off by the size of the gradient itself. A tensor
output y is turned into the scalar L = Σ u·y with a fixed random u, as gradcheck does.

For each case the table shows the largest |analytic - numeric| over all checked elements (computed
here by `max_abs_error`), and whether the library's `gradcheck` passes. Layers are built in float64
and their parameters are passed as inputs, so the weights are checked too, not only the input.
Inputs sit away from kinks (relu, abs at 0; max at ties) where the derivative is not defined.

Run:  python demos/gradcheck_tour.py [--out DIR] [--only SUBSTRING]     (default out/gradcheck_tour/)
Prints the table and writes it to gradcheck_tour.txt; the exit code is 1 if any check fails.
"""
from __future__ import annotations

import sys
import time

import numpy as np

import _common  # first: makes the library importable from a checkout
import nn
from tinygrad_like import GradcheckError, Tensor, grad, gradcheck

F64 = np.float64


def max_abs_error(fn, *inputs, eps=1e-6, seed=0) -> float:
    """Largest |analytic - numeric| over every element of every float64 input with requires_grad."""
    wrt = [t for t in inputs if isinstance(t, Tensor) and t.requires_grad]
    u = Tensor(np.random.default_rng(seed).standard_normal(fn(*inputs).shape), dtype=F64)  # random direction

    def loss() -> Tensor:                                       # L = Σ u·fn(inputs), a scalar
        return (fn(*inputs) * u).sum()

    analytic = grad(loss(), wrt, allow_unused=True)              # backward, once
    worst = 0.0
    for t, g in zip(wrt, analytic):
        g = np.zeros(t.shape) if g is None else g.numpy()      # None: L does not depend on t
        values = t.numpy()                                     # t's own array, nudged in place
        for i in np.ndindex(*t.shape):                         # central differences, element by element
            original = values[i]
            values[i] = original + eps
            plus = loss().item()
            values[i] = original - eps
            minus = loss().item()
            values[i] = original
            worst = max(worst, abs(g[i] - (plus - minus) / (2 * eps)))
    return float(worst)


# ---------------------------------------------------------------- inputs


def x(*shape) -> Tensor:
    """A float64 input to check: standard normal."""
    return Tensor.randn(*shape, dtype=F64, requires_grad=True)


def pos(*shape) -> Tensor:
    """Positive, for log, sqrt, division and powers: uniform in [0.5, 2]."""
    return Tensor.uniform(*shape, low=0.5, high=2.0, dtype=F64, requires_grad=True)


def away(*shape) -> Tensor:
    """Normal but at least 0.2 from zero, away from the kink of relu and abs."""
    a = np.random.default_rng(1).standard_normal(shape)
    return Tensor(np.sign(a) * (np.abs(a) + 0.2), dtype=F64, requires_grad=True)


def spread(*shape) -> Tensor:
    """Distinct values at least 0.1 apart (shuffled), so max/min have no ties."""
    n = int(np.prod(shape))
    a = np.random.default_rng(2).permutation(n) * 0.1 - n * 0.05
    return Tensor(a.reshape(shape), dtype=F64, requires_grad=True)


def reseeded_dropout(t: Tensor) -> Tensor:
    Tensor.manual_seed(123)                                     # the same mask on every call
    return t.dropout(0.5)


def op_cases() -> list:
    """(name, fn, inputs): every primitive and composed op of the engine."""
    tril = np.tril(np.ones((3, 3), dtype=bool))
    return [
        # unary
        ("neg", lambda a: -a, [x(3, 4)]),
        ("exp", lambda a: a.exp(), [x(3, 4)]),
        ("log", lambda a: a.log(), [pos(3, 4)]),
        ("sqrt", lambda a: a.sqrt(), [pos(3, 4)]),
        ("tanh", lambda a: a.tanh(), [x(3, 4)]),
        ("sigmoid", lambda a: a.sigmoid(), [x(3, 4)]),
        ("relu", lambda a: a.relu(), [away(3, 4)]),
        ("abs", lambda a: a.abs(), [away(3, 4)]),
        ("gelu", lambda a: a.gelu(), [x(3, 4)]),
        ("silu", lambda a: a.silu(), [x(3, 4)]),
        # binary, with broadcasting
        ("add (3,4)+(4,)", lambda a, b: a + b, [x(3, 4), x(4)]),
        ("sub (3,4)-(3,1)", lambda a, b: a - b, [x(3, 4), x(3, 1)]),
        ("mul (2,3,4)*(3,1)", lambda a, b: a * b, [x(2, 3, 4), x(3, 1)]),
        ("div", lambda a, b: a / b, [x(3, 4), pos(3, 4)]),
        ("pow x**y", lambda a, b: a ** b, [pos(3, 4), x(3, 4)]),
        ("pow x**3", lambda a: a ** 3, [x(3, 4)]),
        ("pow x**-0.5", lambda a: a ** -0.5, [pos(3, 4)]),
        ("maximum", lambda a, b: a.maximum(b), [spread(3, 4), x(3, 4)]),
        ("minimum", lambda a, b: a.minimum(b), [spread(3, 4), x(3, 4)]),
        ("clip", lambda a: a.clip(-0.42, 0.37), [spread(3, 4)]),
        ("matmul (3,4)@(4,5)", lambda a, b: a @ b, [x(3, 4), x(4, 5)]),
        ("matmul (2,3,4)@(4,5)", lambda a, b: a @ b, [x(2, 3, 4), x(4, 5)]),
        ("matmul (4,)@(4,5)", lambda a, b: a @ b, [x(4), x(4, 5)]),
        ("where", lambda a, b: Tensor(tril).where(a, b), [x(3, 3), x(3, 3)]),
        ("masked_fill", lambda a: a.masked_fill(Tensor(tril), 0.5), [x(3, 3)]),
        # reduce
        ("sum", lambda a: a.sum(), [x(3, 4)]),
        ("sum axis=1 keepdim", lambda a: a.sum(1, keepdim=True), [x(3, 4)]),
        ("mean axis=(0,2)", lambda a: a.mean((0, 2)), [x(2, 3, 4)]),
        ("max axis=-1", lambda a: a.max(axis=-1), [spread(3, 4)]),
        ("min", lambda a: a.min(), [spread(3, 4)]),
        ("var axis=-1", lambda a: a.var(-1), [x(3, 4)]),
        ("std", lambda a: a.std(), [x(3, 4)]),
        # movement and selection
        ("reshape", lambda a: a.reshape(4, 3), [x(3, 4)]),
        ("permute", lambda a: a.permute(2, 0, 1), [x(2, 3, 4)]),
        ("transpose .T", lambda a: a.T, [x(3, 4)]),
        ("expand", lambda a: a.expand(2, 3, 4), [x(3, 1)]),
        ("flatten", lambda a: a.flatten(1), [x(2, 3, 4)]),
        ("unsqueeze squeeze", lambda a: a.unsqueeze(1).squeeze(), [x(3, 4)]),
        ("getitem slice", lambda a: a[1:, ::2], [x(3, 4)]),
        ("getitem gather (repeats)", lambda a: a[[0, 2, 2, 1]], [x(3, 4)]),
        ("cat dim=1", lambda a, b: Tensor.cat(a, b, dim=1), [x(3, 2), x(3, 4)]),
        ("stack dim=0", lambda a, b: Tensor.stack(a, b), [x(3, 4), x(3, 4)]),
        # functional nn ops
        ("softmax", lambda a: a.softmax(-1), [x(3, 5)]),
        ("log_softmax", lambda a: a.log_softmax(-1), [x(3, 5)]),
        ("layernorm", lambda a: a.layernorm(-1), [x(3, 5)]),
        ("cross-entropy (ignore_index)", lambda a: a.sparse_categorical_crossentropy([[1, 4, -1], [0, 2, 3]]),
         [x(2, 3, 5)]),
        ("dropout (fixed mask)", reseeded_dropout, [x(3, 4)]),
        ("attention", lambda q, k, v: q.scaled_dot_product_attention(k, v), [x(2, 3, 4), x(2, 5, 4), x(2, 5, 3)]),
        ("attention causal", lambda q, k, v: q.scaled_dot_product_attention(k, v, is_causal=True),
         [x(2, 4, 4), x(2, 4, 4), x(2, 4, 3)]),
        ("attention bool mask", lambda q, k, v: q.scaled_dot_product_attention(k, v, attn_mask=tril),
         [x(3, 4), x(3, 4), x(3, 2)]),
    ]


def layer(module, *inputs):
    """(fn, inputs) checking the module's input (when it requires grad) and all its parameters."""
    return (lambda first, *params: module(first)), [*inputs, *module.parameters()]


def layer_cases() -> list:
    """(name, fn, inputs): every nn layer, built in float64, small."""
    cases = [
        ("Linear", nn.Linear(4, 3, dtype=F64), x(2, 4)),
        ("Linear bias=False", nn.Linear(4, 3, bias=False, dtype=F64), x(2, 4)),
        ("Embedding (repeated ids)", nn.Embedding(6, 3, dtype=F64), np.array([[1, 4, 1], [0, 5, 5]])),
        ("LayerNorm", nn.LayerNorm(5, dtype=F64), x(2, 3, 5)),
        ("LayerNorm bias=False", nn.LayerNorm(5, bias=False, dtype=F64), x(2, 3, 5)),
        ("RMSNorm", nn.RMSNorm(5, dtype=F64), x(2, 3, 5)),
        ("MLP gelu", nn.MLP(4, 8, dtype=F64), x(2, 3, 4)),
        ("MLP relu", nn.MLP(4, 8, activation="relu", dtype=F64), x(2, 3, 4)),
        ("MLP swiglu", nn.MLP(4, 8, activation="swiglu", dtype=F64), x(2, 3, 4)),
        ("Attention causal", nn.Attention(4, 2, dtype=F64), x(2, 3, 4)),
        ("Attention not causal", nn.Attention(4, 2, causal=False, dtype=F64), x(2, 3, 4)),
        ("Attention GQA 4q/2kv", nn.Attention(8, 4, n_kv_head=2, dtype=F64), x(1, 3, 8)),
        ("Attention RoPE", nn.Attention(4, 2, rope=True, dtype=F64), x(1, 3, 4)),
        ("MoE top-2 of 3", nn.MoE(4, 4, 3, top_k=2, dtype=F64), x(2, 3, 4)),
        ("Block pre-norm gelu", nn.Block(4, 2, mlp_hidden=8, dtype=F64), x(1, 3, 4)),
        ("Block post-norm rmsnorm swiglu", nn.Block(4, 2, mlp_hidden=6, mlp="swiglu", norm="rmsnorm",
                                                    prenorm=False, dtype=F64), x(1, 3, 4)),
        ("Block MoE", nn.Block(4, 2, mlp_hidden=4, n_expert=3, top_k=2, dtype=F64), x(1, 3, 4)),
    ]
    rows = [(name, *layer(module, inp)) for name, module, inp in cases]
    moe = nn.MoE(4, 4, 3, top_k=2, dtype=F64)

    def aux(first, *params):                                    # the load-balancing loss, through the router
        moe(first)
        return moe.aux_loss
    rows.append(("MoE aux_loss", aux, [x(2, 3, 4), *moe.parameters()]))
    return rows


def check(name, fn, inputs) -> dict:
    start = time.perf_counter()
    try:
        err = max_abs_error(fn, *inputs)
        gradcheck(fn, *inputs)
        ok, note = True, ""
    except GradcheckError as e:
        ok, note = False, str(e)
    except Exception as e:  # a crash is a failure too: show it rather than stop the tour
        err, ok, note = float("nan"), False, f"{type(e).__name__}: {e}"
    n = sum(t.numel() for t in inputs if isinstance(t, Tensor) and t.requires_grad)
    return {"name": name, "max_abs_error": err, "passed": ok, "elements": n,
            "seconds": time.perf_counter() - start, "note": note}


def main(argv=None) -> dict:
    p = _common.parser("gradcheck_tour", __doc__.splitlines()[0])
    p.add_argument("--only", default="", help="check only the cases whose name contains this (case-insensitive)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    Tensor.manual_seed(args.seed)
    cases = [("op", c) for c in op_cases()] + [("layer", c) for c in layer_cases()]
    cases = [(kind, c) for kind, c in cases if args.only.lower() in c[0].lower()]

    lines = []

    def say(line: str = "") -> None:                          # print, and keep for the table file
        print(line)
        lines.append(line)

    say(f"{'':6s}{'name':34s} {'checked':>8s} {'max abs error':>14s}  pass")
    rows = []
    for kind, (name, fn, inputs) in cases:
        row = check(name, fn, inputs)
        rows.append(row)
        say(f"{kind:6s}{name:34s} {row['elements']:8d} {row['max_abs_error']:14.2e}  "
            f"{'ok' if row['passed'] else 'FAIL'}")
        if row["note"]:
            say(f"      {row['note']}")
    failed = [r["name"] for r in rows if not r["passed"]]
    worst = max((r["max_abs_error"] for r in rows), default=0.0)
    say(f"\n{len(rows) - len(failed)} of {len(rows)} passed; the largest error anywhere is {worst:.1e}"
        + (f"; FAILED: {', '.join(failed)}" if failed else ""))
    table = _common.out_dir(args.out) / "gradcheck_tour.txt"
    table.write_text("\n".join(lines) + "\n")
    print(f"  wrote {table}")
    return {"rows": rows, "all_passed": not failed, "failed": failed, "files": {"table": table}}


if __name__ == "__main__":
    sys.exit(0 if main()["all_passed"] else 1)

"""Every op of the engine, in one table: forward against plain numpy, gradient against finite differences.

Each row is `case(op, shapes, fn, ref, kind)`: `fn` takes float64 Tensors, `ref` the same values as
numpy arrays, written independently (no engine code). For every row we check
  1. the forward value equals the numpy reference (and stays float64),
  2. `gradcheck` passes (central differences, float64),
  3. `gradgradcheck` passes (second derivatives, through create_graph),
  4. `.sum().backward()` runs and gives every input a float64 gradient of the input's shape
     (this is what the empty-dimension rows are for). Inputs are drawn so that finite differences are valid:
"pos" keeps log/sqrt/div in their domain, "distinct" keeps max/relu/abs/clip away from ties and kinks.
"""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import tinygrad_like.torch as torch_facade
from tinygrad_like import Tensor, gradcheck, gradgradcheck
from tinygrad_like.einsum import einsum

F_facade = torch_facade.nn.functional

# ---------------------------------------------------------------- inputs


def make_arrays(shapes, kind, rng):
    """float64 arrays of `shapes`: "normal", "pos" (in [0.5, 2]) or "distinct" (all values across all
    inputs different by >= 0.1 and >= 0.05 away from 0, so no max ties and no kinks at 0)."""
    if kind == "normal":
        return [rng.standard_normal(s) for s in shapes]
    if kind == "pos":
        return [rng.uniform(0.5, 2.0, s) for s in shapes]
    if kind == "distinct":
        sizes = [math.prod(s) for s in shapes]
        values = (rng.permutation(sum(sizes)) - sum(sizes) // 2) * 0.1 + 0.05
        parts = np.split(values, np.cumsum(sizes)[:-1])
        return [p.reshape(s) for p, s in zip(parts, shapes)]
    raise ValueError(kind)


# ---------------------------------------------------------------- numpy references (independent of the engine)

def np_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def np_log_softmax(x, axis=-1):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def np_gelu(x):  # GPT-2's tanh approximation, written out
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))


def np_layernorm(x, axis=-1, eps=1e-5):
    mu = x.mean(axis=axis, keepdims=True)
    return (x - mu) / np.sqrt(x.var(axis=axis, keepdims=True) + eps)


def np_attention(q, k, v, mask=None, causal=False):
    """softmax(q kᵀ/√d + mask) v, with mask float (added) or bool (True = attend)."""
    s = np.einsum("...qd,...kd->...qk", q, k) / np.sqrt(q.shape[-1])
    if causal:
        tq, tk = s.shape[-2:]
        s = np.where(np.arange(tk)[None, :] <= np.arange(tq)[:, None] + (tk - tq), s, -np.inf)
    if mask is not None:
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask
    w = np_softmax(s)
    return np.einsum("...qk,...kd->...qd", w, v), w


def np_crossentropy(logits, targets, ignore_index=-1):
    logp = np_log_softmax(logits.reshape(-1, logits.shape[-1]))
    t = targets.reshape(-1)
    rows = [i for i in range(len(t)) if t[i] != ignore_index]
    return -sum(logp[i, t[i]] for i in rows) / max(len(rows), 1)


def np_scatter_add(shape, index, g):
    out = np.zeros(shape)
    np.add.at(out, index, g)
    return out


# ---------------------------------------------------------------- the table

CASES = []


def case(op, shapes, fn, ref, kind="normal", label=""):
    """One row. `ref=None`: the forward value is checked in a test of its own (dropout's random mask)."""
    CASES.append(pytest.param(op, shapes, fn, ref, kind, id=f"{op}{':' + label if label else ''}{shapes}"))


IDX = np.array([[0, 2], [2, 2], [1, 0]])  # a gather with repeated indices: its gradient must scatter-add
MASK = np.array([[True, False, True, True], [False, False, True, False], [True, True, True, True]])
BOOL_ATTN = np.array([[True, False, False], [True, True, False], [True, False, True], [False, True, True]])
FLOAT_ATTN = np.array([[0.0, -1.0, 0.5], [-2.0, 0.0, 0.3], [0.1, 0.2, -0.4], [0.0, 0.0, -9.0]])
C3 = np.array([1.0, -2.0, 3.0])
M23 = np.array([[1.0, 0.5, -1.0], [2.0, 0.0, 1.0]])
TARGETS = np.array([[1, 0, 4], [-1, 3, 3]])  # one ignored position (-1)

# binary arithmetic, broadcasting both ways, size-1 and empty dimensions, reflected forms
case("add", [(3, 1), (1, 4)], lambda x, y: x + y, lambda x, y: x + y)
case("add", [(4,), (2, 3, 4)], lambda x, y: x + y, lambda x, y: x + y)
case("add", [(2, 3), (3,)], lambda x, y: x + y, lambda x, y: x + y)
case("add", [(0, 3), (3,)], lambda x, y: x + y, lambda x, y: x + y, label="empty")
case("add", [(2, 3)], lambda x: 1.5 + x, lambda x: 1.5 + x, label="scalar")
case("sub", [(2, 3), (3,)], lambda x, y: x - y, lambda x, y: x - y)
case("sub", [(1, 3), (2, 1)], lambda x, y: x - y, lambda x, y: x - y)
case("sub", [(2, 3)], lambda x: 2.5 - x, lambda x: 2.5 - x, label="reflected")
case("mul", [(3, 1), (1, 4)], lambda x, y: x * y, lambda x, y: x * y)
case("mul", [(4,), (2, 3, 4)], lambda x, y: x * y, lambda x, y: x * y)
case("mul", [(2, 0), (1,)], lambda x, y: x * y, lambda x, y: x * y, label="empty")
case("mul", [(2, 3)], lambda x: 3.0 * x * 2, lambda x: 3.0 * x * 2, label="scalar")
case("div", [(2, 3), (3,)], lambda x, y: x / y, lambda x, y: x / y, kind="pos")
case("div", [(3,), (2, 3)], lambda x, y: x / y, lambda x, y: x / y, kind="pos")
case("div", [(2, 3)], lambda x: 2.0 / x, lambda x: 2.0 / x, kind="pos", label="reflected")
case("div", [(2, 3)], lambda x: x / 4, lambda x: x / 4, label="scalar")
case("pow", [(2, 3), (3,)], lambda x, y: x ** y, lambda x, y: x ** y, kind="pos")
case("pow", [(2, 3)], lambda x: x ** 3, lambda x: x ** 3, label="int")
case("pow", [(2, 3)], lambda x: x ** 2, lambda x: x ** 2, label="square")
case("pow", [(2, 3)], lambda x: x ** 0.5, lambda x: x ** 0.5, kind="pos", label="sqrt")
case("pow", [(2, 3)], lambda x: x ** -1.5, lambda x: x ** -1.5, kind="pos", label="neg")
case("pow", [(2, 3)], lambda x: x ** 1, lambda x: x ** 1, label="one")
case("pow", [(2, 3)], lambda x: x ** 0 + x, lambda x: x ** 0 + x, label="zero")
case("pow", [(2, 3)], lambda x: 2.0 ** x, lambda x: 2.0 ** x, label="reflected")
case("sub", [(2, 3)], lambda x: C3 - x, lambda x: C3 - x, label="reflected-numpy")
case("div", [(2, 3)], lambda x: C3 / x, lambda x: C3 / x, kind="pos", label="reflected-numpy")
case("neg", [(2, 3)], lambda x: -x, lambda x: -x)

# matmul: 2-D, batched, broadcast batch dims, 1-D vectors on either side, empty
case("matmul", [(3, 4), (4, 5)], lambda x, y: x @ y, lambda x, y: x @ y)
case("matmul", [(2, 3, 4), (2, 4, 5)], lambda x, y: x @ y, lambda x, y: np.einsum("bij,bjk->bik", x, y))
case("matmul", [(2, 1, 3, 4), (3, 4, 2)], lambda x, y: x @ y, lambda x, y: np.einsum("abij,bjk->abik", x, y))
case("matmul", [(3, 4), (2, 4, 5)], lambda x, y: x.matmul(y), lambda x, y: np.einsum("ij,bjk->bik", x, y))
case("matmul", [(4,), (4, 5)], lambda x, y: x @ y, lambda x, y: np.einsum("j,jk->k", x, y))
case("matmul", [(3, 4), (4,)], lambda x, y: x @ y, lambda x, y: np.einsum("ij,j->i", x, y))
case("matmul", [(4,), (4,)], lambda x, y: x.dot(y), lambda x, y: np.sum(x * y))
case("matmul", [(2, 3, 4), (4,)], lambda x, y: x @ y, lambda x, y: np.einsum("bij,j->bi", x, y))
case("matmul", [(4,), (2, 4, 5)], lambda x, y: x @ y, lambda x, y: np.einsum("j,bjk->bk", x, y))
case("matmul", [(3, 4)], lambda x: M23 @ x, lambda x: M23 @ x, label="reflected-numpy")
case("matmul", [(0, 4), (4, 5)], lambda x, y: x @ y, lambda x, y: np.zeros((0, 5)), label="empty")
case("matmul", [(3, 0), (0, 5)], lambda x, y: x @ y, lambda x, y: np.zeros((3, 5)), label="empty-inner")

# elementwise
case("exp", [(2, 3)], lambda x: x.exp(), np.exp)
case("log", [(2, 3)], lambda x: x.log(), np.log, kind="pos")
case("sqrt", [(2, 3)], lambda x: x.sqrt(), np.sqrt, kind="pos")
case("tanh", [(2, 3)], lambda x: x.tanh(), np.tanh)
case("sigmoid", [(2, 3)], lambda x: x.sigmoid(), lambda x: 1 / (1 + np.exp(-x)))
case("relu", [(2, 3)], lambda x: x.relu(), lambda x: np.where(x > 0, x, 0.0), kind="distinct")
case("gelu", [(2, 3)], lambda x: x.gelu(), np_gelu)
case("silu", [(2, 3)], lambda x: x.silu(), lambda x: x / (1 + np.exp(-x)))
case("abs", [(2, 3)], lambda x: x.abs(), np.abs, kind="distinct")
case("exp", [(0, 2)], lambda x: x.exp(), np.exp, label="empty")
case("maximum", [(2, 3), (3,)], lambda x, y: x.maximum(y), np.maximum, kind="distinct")
case("maximum", [(2, 3)], lambda x: x.maximum(0.12), lambda x: np.maximum(x, 0.12), kind="distinct", label="scalar")
case("minimum", [(3, 1), (1, 2)], lambda x, y: x.minimum(y), np.minimum, kind="distinct")
case("clip", [(3, 4)], lambda x: x.clip(-0.5, 0.5), lambda x: np.clip(x, -0.5, 0.5), kind="distinct")
case("clip", [(3, 4)], lambda x: x.clip(min=0.2), lambda x: np.maximum(x, 0.2), kind="distinct", label="low")

# reductions: axis None / int / negative / tuple, keepdim, correction
case("sum", [(2, 3, 4)], lambda x: x.sum(), np.sum)
case("sum", [(2, 3, 4)], lambda x: x.sum(axis=1), lambda x: x.sum(axis=1))
case("sum", [(2, 3, 4)], lambda x: x.sum(axis=-1, keepdim=True), lambda x: x.sum(axis=-1, keepdims=True))
case("sum", [(2, 3, 4)], lambda x: x.sum(axis=(0, -1)), lambda x: x.sum(axis=(0, 2)))
case("sum", [(0, 3)], lambda x: x.sum(axis=0), lambda x: x.sum(axis=0), label="empty")
case("mean", [(2, 3, 4)], lambda x: x.mean(), np.mean)
case("mean", [(2, 3, 4)], lambda x: x.mean(axis=(2, 0), keepdim=True), lambda x: x.mean(axis=(0, 2), keepdims=True))
case("mean", [(2, 3, 4)], lambda x: x.mean(axis=-2), lambda x: x.mean(axis=1))
case("max", [(2, 3, 4)], lambda x: x.max(), np.max, kind="distinct")
case("max", [(2, 3, 4)], lambda x: x.max(axis=0), lambda x: x.max(axis=0), kind="distinct")
case("max", [(2, 3, 4)], lambda x: x.max(axis=-1, keepdim=True), lambda x: x.max(-1, keepdims=True), kind="distinct")
case("max", [(2, 3, 4)], lambda x: x.max(axis=(0, 2)), lambda x: x.max(axis=(0, 2)), kind="distinct")
case("max", [(0, 3)], lambda x: x.max(axis=1), lambda x: np.zeros((0,)), label="empty")
case("min", [(2, 3, 4)], lambda x: x.min(axis=1), lambda x: x.min(axis=1), kind="distinct")
case("min", [(2, 3)], lambda x: x.min(), np.min, kind="distinct")
case("var", [(2, 3, 4)], lambda x: x.var(), lambda x: x.var(ddof=1))
case("var", [(2, 3, 4)], lambda x: x.var(axis=-1, correction=0), lambda x: x.var(axis=-1))
case("var", [(2, 3, 4)], lambda x: x.var(axis=(0, 2), keepdim=True),
     lambda x: x.var(axis=(0, 2), ddof=1, keepdims=True))
case("std", [(2, 3, 4)], lambda x: x.std(axis=1), lambda x: x.std(axis=1, ddof=1))
case("std", [(3, 4)], lambda x: x.std(correction=0), lambda x: x.std())
case("std", [(3, 4)], lambda x: x.std(axis=-1, keepdim=True), lambda x: x.std(axis=-1, ddof=1, keepdims=True))

# movement
case("reshape", [(2, 3, 4)], lambda x: x.reshape(-1, 2), lambda x: x.reshape(-1, 2))
case("reshape", [(2, 3, 4)], lambda x: x.reshape((6, 4)), lambda x: x.reshape(6, 4))
case("reshape", [(0, 4)], lambda x: x.reshape(2, 0, 2), lambda x: x.reshape(2, 0, 2), label="empty")
case("permute", [(2, 3, 4)], lambda x: x.permute(2, 0, 1), lambda x: x.transpose(2, 0, 1))
case("permute", [(2, 3, 4)], lambda x: x.permute((-1, 0, 1)), lambda x: x.transpose(2, 0, 1))
case("transpose", [(2, 3, 4)], lambda x: x.transpose(0, -1), lambda x: np.swapaxes(x, 0, 2))
case("T", [(2, 3)], lambda x: x.T, lambda x: x.T)
case("expand", [(3, 1)], lambda x: x.expand(2, 3, 4), lambda x: np.broadcast_to(x, (2, 3, 4)))
case("expand", [(3, 1)], lambda x: x.expand(-1, 4), lambda x: np.broadcast_to(x, (3, 4)))
case("flatten", [(2, 3, 4)], lambda x: x.flatten(), lambda x: x.reshape(-1))
case("flatten", [(2, 3, 4)], lambda x: x.flatten(1), lambda x: x.reshape(2, 12))
case("flatten", [(0, 3, 4)], lambda x: x.flatten(1), lambda x: x.reshape(0, 12), label="empty")
case("unsqueeze", [(2, 3)], lambda x: x.unsqueeze(0), lambda x: x[None])
case("unsqueeze", [(2, 3)], lambda x: x.unsqueeze(-1), lambda x: x[..., None])
case("squeeze", [(2, 1, 3)], lambda x: x.squeeze(1), lambda x: x[:, 0])
case("squeeze", [(1, 3, 1)], lambda x: x.squeeze(), lambda x: x.reshape(3))
case("getitem", [(4, 5)], lambda x: x[1], lambda x: x[1], label="int")
case("getitem", [(4, 5)], lambda x: x[-1, 2], lambda x: x[-1, 2], label="negative-int")
case("getitem", [(4, 5)], lambda x: x[1:, ::2], lambda x: x[1:, ::2], label="slices")
case("getitem", [(4, 5)], lambda x: x[None, :, 3], lambda x: x[None, :, 3], label="None")
case("getitem", [(4, 5)], lambda x: x[::-1, -1:0:-2], lambda x: x[::-1, -1:0:-2], label="negative-step")
case("getitem", [(2, 3, 4)], lambda x: x[..., 1], lambda x: x[..., 1], label="ellipsis")
case("getitem", [(3, 4)], lambda x: x[IDX], lambda x: x[IDX], label="gather")
case("getitem", [(3, 4)], lambda x: x[IDX] ** 2, lambda x: x[IDX] ** 2, label="gather-squared")
case("getitem", [(3, 4)], lambda x: x[Tensor(IDX)], lambda x: x[IDX], label="gather-tensor")
case("getitem", [(3, 4)], lambda x: x[[2, 0, 2], 1:3], lambda x: x[[2, 0, 2], 1:3], label="mixed")
case("getitem", [(3, 4)], lambda x: x[[0, 2, 2], [1, 3, 3]], lambda x: x[[0, 2, 2], [1, 3, 3]], label="pairs")
case("getitem", [(3, 4)], lambda x: x[MASK], lambda x: x[MASK], label="bool-mask")
case("getitem", [(0, 4)], lambda x: x[:, 1:3], lambda x: x[:, 1:3], label="empty")
case("cat", [(2, 3), (1, 3), (4, 3)], lambda *xs: Tensor.cat(*xs), lambda *xs: np.concatenate(xs))
case("cat", [(2, 3), (2, 1)], lambda x, y: Tensor.cat([x, y], dim=-1), lambda x, y: np.concatenate([x, y], -1))
case("cat", [(2, 3), (0, 3)], lambda x, y: Tensor.cat(x, y), lambda x, y: np.concatenate([x, y]), label="empty")
case("stack", [(2, 3), (2, 3), (2, 3)], lambda *xs: Tensor.stack(*xs), lambda *xs: np.stack(xs))
case("stack", [(2, 3), (2, 3)], lambda x, y: Tensor.stack([x, y], dim=-1), lambda x, y: np.stack([x, y], -1))

# selection
case("where", [(3, 4), (4,)], lambda x, y: Tensor(MASK).where(x, y), lambda x, y: np.where(MASK, x, y))
case("where", [(1, 4)], lambda x: Tensor(MASK).where(x, 0.5), lambda x: np.where(MASK, x, 0.5), label="scalar")
case("masked_fill", [(3, 4)], lambda x: x.masked_fill(Tensor(MASK), -2.0), lambda x: np.where(MASK, -2.0, x))
case("masked_fill", [(2, 3, 4)], lambda x: x.masked_fill(MASK, 0.0), lambda x: np.where(MASK, 0.0, x), label="bcast")

# composites (built from the primitives above)
case("softmax", [(3, 5)], lambda x: x.softmax(), np_softmax)
case("softmax", [(3, 5)], lambda x: x.softmax(axis=0), lambda x: np_softmax(x, 0))
case("log_softmax", [(3, 5)], lambda x: x.log_softmax(), np_log_softmax)
case("log_softmax", [(2, 3, 4)], lambda x: x.log_softmax(axis=1), lambda x: np_log_softmax(x, 1))
case("softmax", [(0, 5)], lambda x: x.softmax(), np_softmax, label="empty")
case("layernorm", [(3, 5)], lambda x: x.layernorm(), np_layernorm)
case("layernorm", [(2, 3, 4)], lambda x: x.layernorm(axis=1, eps=1e-3), lambda x: np_layernorm(x, 1, 1e-3))
case("sparse_categorical_crossentropy", [(2, 3, 5)], lambda x: x.sparse_categorical_crossentropy(TARGETS),
     lambda x: np_crossentropy(x, TARGETS))
case("sparse_categorical_crossentropy", [(2, 3, 5)],
     lambda x: x.sparse_categorical_crossentropy(Tensor(TARGETS % 5), ignore_index=4),
     lambda x: np_crossentropy(x, TARGETS % 5, ignore_index=4), label="ignore4")
case("dropout", [(4, 5)], lambda x: (Tensor.manual_seed(7), x.dropout(0.4))[1], None)  # re-seeded: same mask
case("scaled_dot_product_attention", [(2, 4, 3), (2, 3, 3), (2, 3, 2)],
     lambda q, k, v: q.scaled_dot_product_attention(k, v), lambda q, k, v: np_attention(q, k, v)[0])
case("scaled_dot_product_attention", [(4, 3), (3, 3), (3, 2)],
     lambda q, k, v: q.scaled_dot_product_attention(k, v, attn_mask=BOOL_ATTN),
     lambda q, k, v: np_attention(q, k, v, BOOL_ATTN)[0], label="bool-mask")
case("scaled_dot_product_attention", [(2, 4, 3), (2, 3, 3), (2, 3, 2)],
     lambda q, k, v: q.scaled_dot_product_attention(k, v, attn_mask=Tensor(FLOAT_ATTN)),
     lambda q, k, v: np_attention(q, k, v, FLOAT_ATTN)[0], label="float-mask")
case("scaled_dot_product_attention", [(1, 3, 4), (1, 3, 4), (1, 3, 4)],
     lambda q, k, v: q.scaled_dot_product_attention(k, v, is_causal=True),
     lambda q, k, v: np_attention(q, k, v, causal=True)[0], label="causal")
case("scaled_dot_product_attention", [(2, 4), (5, 4), (5, 3)],
     lambda q, k, v: q.scaled_dot_product_attention(k, v, is_causal=True),
     lambda q, k, v: np_attention(q, k, v, causal=True)[0], label="causal-kv-cache")
case("scaled_dot_product_attention", [(3, 2), (3, 2)],
     lambda q, k: q.scaled_dot_product_attention(k, Tensor(np.eye(3)), is_causal=True, return_weights=True)[1],
     lambda q, k: np_attention(q, k, np.eye(3), causal=True)[1], label="weights")

# The ops real PyTorch programs reach through the facade (issue 26): einsum (composed), bmm, outer, leaky_relu,
# normalize; references by numpy's own einsum or written out.
case("einsum", [(2, 3, 4), (2, 4, 5)], lambda x, y: einsum("bij,bjk->bik", x, y),
     lambda x, y: np.einsum("bij,bjk->bik", x, y))
case("einsum", [(3,), (4,)], lambda x, y: einsum("i,j->ij", x, y), lambda x, y: x[:, None] * y[None, :])
case("einsum", [(3, 4)], lambda x: einsum("ij->j", x), lambda x: x.sum(0))
case("einsum", [(3, 4), (3, 4)], lambda x, y: einsum("ij,ij->", x, y), lambda x, y: (x * y).sum())
case("einsum", [(2, 3, 4), (3, 5), (5,)], lambda x, y, z: einsum("bij,ik,k->bjk", x, y, z),
     lambda x, y, z: np.einsum("bij,ik,k->bjk", x, y, z), label="three")
case("einsum", [(2, 3), (4, 3)], lambda x, y: einsum("ij,kj", x, y), lambda x, y: x @ y.T, label="implicit")
case("bmm", [(2, 3, 4), (2, 4, 5)], lambda x, y: torch_facade.bmm(x, y), lambda x, y: np.matmul(x, y))
case("outer", [(3,), (4,)], lambda x, y: torch_facade.outer(x, y), lambda x, y: np.outer(x, y))
case("leaky_relu", [(3, 4)], lambda x: F_facade.leaky_relu(x, 0.2), lambda x: np.where(x > 0, x, 0.2 * x),
     kind="distinct")
case("normalize", [(3, 4)], lambda x: F_facade.normalize(x, dim=1),
     lambda x: x / np.sqrt((x ** 2).sum(1, keepdims=True)))
case("normalize", [(3, 4)], lambda x: F_facade.normalize(x, p=1.0, dim=0), lambda x: x / np.abs(x).sum(0),
     kind="distinct", label="p1")

# Every op of the engine's contract (issue 2) must have at least one row above.
CONTRACT_OPS = {"add", "sub", "mul", "div", "pow", "neg", "matmul", "exp", "log", "sqrt", "tanh", "sigmoid", "relu",
                "gelu", "silu", "abs", "maximum", "minimum", "clip", "sum", "mean", "max", "min", "var", "std",
                "reshape", "permute", "transpose", "T", "expand", "flatten", "unsqueeze", "squeeze", "getitem", "cat",
                "stack", "where", "masked_fill", "softmax", "log_softmax", "layernorm",
                "sparse_categorical_crossentropy", "dropout", "scaled_dot_product_attention"}
FACADE_OPS = {"einsum", "bmm", "outer", "leaky_relu", "normalize"}


def test_table_covers_every_op_of_the_contract():
    assert {c.values[0] for c in CASES} == CONTRACT_OPS | FACADE_OPS


def inputs_for(shapes, kind, seed=0):
    arrays = make_arrays(shapes, kind, np.random.default_rng(seed))
    return arrays, [Tensor(a.copy(), requires_grad=True) for a in arrays]


def check_forward_matches_numpy(shapes, fn, ref, kind):
    """fn on float64 Tensors equals the numpy reference `ref` on the same arrays, dtype and shape too."""
    arrays, tensors = inputs_for(shapes, kind)
    out = fn(*tensors)
    expected = np.asarray(ref(*arrays))
    assert out.dtype == np.float64
    assert out.shape == expected.shape
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-10, atol=1e-12)


def check_every_input_gets_a_finite_gradient_of_its_shape(shapes, fn, kind):
    """`.sum().backward()` through fn leaves every input a finite float64 .grad of the input's shape."""
    _, tensors = inputs_for(shapes, kind)
    fn(*tensors).sum().backward()
    for t in tensors:
        assert t.grad is not None and t.grad.shape == t.shape and t.grad.dtype == np.float64
        assert np.isfinite(t.grad.numpy()).all()


@pytest.mark.parametrize("op, shapes, fn, ref, kind", [c for c in CASES if c.values[3] is not None])
def test_forward_matches_numpy(op, shapes, fn, ref, kind):
    check_forward_matches_numpy(shapes, fn, ref, kind)


@pytest.mark.parametrize("op, shapes, fn, ref, kind", CASES)
def test_gradcheck(op, shapes, fn, ref, kind):
    _, tensors = inputs_for(shapes, kind)
    assert gradcheck(fn, *tensors)


@pytest.mark.parametrize("op, shapes, fn, ref, kind", CASES)
def test_backward_gives_every_input_a_gradient_of_its_shape(op, shapes, fn, ref, kind):
    check_every_input_gets_a_finite_gradient_of_its_shape(shapes, fn, kind)


@pytest.mark.parametrize("op, shapes, fn, ref, kind", CASES)
def test_gradgradcheck(op, shapes, fn, ref, kind):
    _, tensors = inputs_for(shapes, kind)
    assert gradgradcheck(fn, *tensors)


# ---------------------------------------------------------------- values worth checking by hand


def test_gather_gradient_scatter_adds_repeated_indices():
    x = Tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    g = np.random.default_rng(1).standard_normal((3, 2, 4))
    x[IDX].backward(Tensor(g))
    np.testing.assert_allclose(x.grad.numpy(), np_scatter_add((3, 4), IDX, g))
    # row 2 is picked three times, row 1 never ... row 0 twice
    np.testing.assert_allclose(x.grad.numpy()[2], g[0, 1] + g[1, 0] + g[1, 1])
    np.testing.assert_array_equal(x.grad.numpy()[1], g[2, 0])


def test_ties_share_the_gradient():
    """max and maximum are not differentiable at ties; the convention (as in PyTorch) splits equally."""
    x = Tensor([1.0, 3.0, 3.0], requires_grad=True)
    x.max().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.5, 0.5])
    a, b = Tensor([1.0, 2.0], requires_grad=True), Tensor([1.0, 0.0], requires_grad=True)
    a.maximum(b).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [0.5, 1.0])
    np.testing.assert_array_equal(b.grad.numpy(), [0.5, 0.0])


def test_gelu_is_gpt2_tanh_approximation():
    x = Tensor([-3.0, -1.0, 0.0, 1.0, 3.0], dtype=np.float64)
    # 0.5·x·(1 + tanh(√(2/π)(x + 0.044715x³))), evaluated by hand at x = 1: 0.8411919906
    assert abs(x.gelu().numpy()[3] - 0.8411919906) < 1e-9
    np.testing.assert_allclose(x.gelu().numpy(), np_gelu(x.numpy()), rtol=1e-12)


@pytest.mark.parametrize("values", [[1e4, 0.0, -1e4], [1e4, 1e4 + 1, 1e4 - 2], [-1e4, -1e4 + 0.5, -1e4 - 3]])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_and_log_softmax_are_stable_for_huge_inputs(values, dtype):
    x = Tensor(np.array(values, dtype=dtype), requires_grad=True)
    ref = np.array(values, dtype=np.float64)
    shifted = ref - ref.max()
    ls, sm = x.log_softmax(), x.softmax()
    assert np.isfinite(ls.numpy()).all() and np.isfinite(sm.numpy()).all()
    np.testing.assert_allclose(ls.numpy(), shifted - np.log(np.exp(shifted).sum()), rtol=1e-6, atol=1e-4)
    np.testing.assert_allclose(sm.numpy(), np.exp(shifted) / np.exp(shifted).sum(), rtol=1e-6, atol=1e-7)
    ls.sum().backward()
    assert np.isfinite(x.grad.numpy()).all()


def test_pow_zero_has_zero_gradient_even_at_zero():
    x = Tensor([0.0, 2.0], requires_grad=True)  # d(x^0)/dx = 0; 0 · x^(-1) would give NaN at x = 0
    (x ** 0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0])


def test_crossentropy_with_everything_ignored_is_zero():
    x = Tensor(np.zeros((2, 3)), requires_grad=True)
    loss = x.sparse_categorical_crossentropy(np.array([-1, -1]))
    assert loss.item() == 0.0


def test_comparisons_give_values_and_carry_no_gradient():
    a, b = np.array([[1.0, 2.0, 3.0]]), np.array([[3.0], [2.0]])
    x, y = Tensor(a, requires_grad=True), Tensor(b, requires_grad=True)
    for op, ref in [(lambda p, q: p < q, np.less), (lambda p, q: p <= q, np.less_equal),
                    (lambda p, q: p > q, np.greater), (lambda p, q: p >= q, np.greater_equal),
                    (lambda p, q: p == q, np.equal)]:
        out = op(x, y)
        np.testing.assert_array_equal(out.numpy(), ref(a, b))
        assert out.dtype == bool and not out.requires_grad and out._ctx is None
        np.testing.assert_array_equal(op(x, 2.0).numpy(), ref(a, 2.0))
    # a comparison used as a mask passes gradient only through the selected values
    z = (x > 2.0).where(x, x * 0.0)
    z.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0.0, 0.0, 1.0]])


def test_dropout_zeroes_or_rescales_each_entry_and_reseeding_repeats_the_mask():
    x = Tensor(np.random.default_rng(0).uniform(1.0, 2.0, (50, 40)))
    Tensor.manual_seed(3)
    y = x.dropout(0.3).numpy()
    kept = y != 0
    np.testing.assert_allclose(y[kept], x.numpy()[kept] / 0.7, rtol=1e-12)
    Tensor.manual_seed(3)
    np.testing.assert_array_equal(x.dropout(0.3).numpy(), y)
    assert not np.array_equal(x.dropout(0.3).numpy(), y)  # the generator moved on


def test_dropout_statistics():
    Tensor.manual_seed(0)
    x = Tensor.ones(200_000)
    y = x.dropout(0.25).numpy()
    assert abs((y == 0).mean() - 0.25) < 0.005           # drops a fraction p
    assert set(np.unique(y)) == {0.0, np.float32(1 / 0.75)}  # the rest scaled by 1/(1-p)
    assert abs(y.mean() - 1.0) < 0.01                   # so the mean is preserved
    assert x.dropout(0.0) is x and x.dropout(0.9, training=False) is x


# ---------------------------------------------------------------- random broadcast shapes (hypothesis)

BINARY = {
    "add": (lambda x, y: x + y, np.add, "normal"),
    "sub": (lambda x, y: x - y, np.subtract, "normal"),
    "mul": (lambda x, y: x * y, np.multiply, "normal"),
    "div": (lambda x, y: x / y, np.divide, "pos"),
    "pow": (lambda x, y: x ** y, np.power, "pos"),
    "maximum": (lambda x, y: x.maximum(y), np.maximum, "distinct"),
    "where": (lambda x, y: (x > 0.3).where(x, y), lambda x, y: np.where(x > 0.3, x, y), "distinct"),
}


@pytest.mark.parametrize("op", BINARY)
@settings(max_examples=12, deadline=None)
@given(shapes=mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, min_side=0, max_side=3),
       seed=st.integers(0, 2 ** 16))
def test_binary_ops_on_random_broadcast_shapes(op, shapes, seed):
    fn, ref, kind = BINARY[op]
    arrays, tensors = inputs_for(shapes.input_shapes, kind, seed)
    out = fn(*tensors)
    assert out.shape == shapes.result_shape
    np.testing.assert_allclose(out.numpy(), ref(*arrays), rtol=1e-12)
    assert gradcheck(fn, *tensors)
    out.sum().backward()
    assert [t.grad.shape for t in tensors] == [t.shape for t in tensors]


@settings(max_examples=15, deadline=None)
@given(shape=st.lists(st.integers(0, 3), min_size=1, max_size=4), data=st.data())
def test_reductions_on_random_shapes_and_axes(shape, data):
    shape = tuple(shape)
    axes = data.draw(st.lists(st.integers(-len(shape), len(shape) - 1), unique_by=lambda a: a % len(shape),
                              max_size=len(shape)))
    axis = data.draw(st.sampled_from([None, tuple(axes)] + ([axes[0]] if axes else [])))
    keepdim = data.draw(st.booleans())
    arrays, (x,) = inputs_for([shape], "normal", seed=len(shape))
    np_axis = axis if axis is None or isinstance(axis, int) else tuple(a % len(shape) for a in axis)
    np.testing.assert_allclose(x.sum(axis, keepdim).numpy(), arrays[0].sum(np_axis, keepdims=keepdim))
    assert gradcheck(lambda t: t.sum(axis, keepdim), x)
    if arrays[0].size and all(shape[a] for a in (range(len(shape)) if axis is None else np.atleast_1d(np_axis))):
        np.testing.assert_allclose(x.mean(axis, keepdim).numpy(), arrays[0].mean(np_axis, keepdims=keepdim))
        assert gradcheck(lambda t: t.mean(axis, keepdim), x)


# ---------------------------------------------------------------- gradcheck itself


def test_gradcheck_nudges_strided_inputs_and_restores_float64_inputs():
    """A transposed (Fortran-order) input is nudged in place too, and float64 inputs get their values back."""
    a = np.random.default_rng(0).standard_normal((4, 3))
    for x in (Tensor(a.T, requires_grad=True), Tensor(np.asfortranarray(a).astype(np.float32), requires_grad=True)):
        assert gradcheck(lambda t: (t * t).tanh(), x)
    w = Tensor(a.copy(), requires_grad=True)
    assert gradcheck(lambda t: t @ t.T, w)
    np.testing.assert_array_equal(w.numpy(), a)


@pytest.mark.parametrize("index", [np.array([3, 0, 3, -1, 4, 3]), np.array([[1, 1], [0, -5]]),
                                   np.array([], dtype=np.int64), np.arange(1, 5), np.array([-5, 1, 2]),
                                   np.array([0, 2, 2])])
def test_gather_gradient_adds_repeated_and_negative_rows(index):
    """The row scatter-add behind an embedding's gradient, against a plain Python loop."""
    table = Tensor(np.random.default_rng(0).standard_normal((5, 3)), requires_grad=True, dtype=np.float64)
    upstream = np.random.default_rng(1).standard_normal(index.shape + (3,))
    table[index].backward(upstream)
    expected = np.zeros((5, 3))
    for i, row in zip(index.reshape(-1), upstream.reshape(-1, 3)):
        expected[i] += row
    np.testing.assert_allclose(table.grad.numpy(), expected, rtol=0, atol=1e-12)

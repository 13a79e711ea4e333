"""The API learners reach for (issue 11), in one table like tests/test_ops_gradcheck.py: for every
differentiable op, the forward value against an independent numpy reference in float64, then
gradcheck, gradgradcheck, and a finite gradient of the input's shape from `.sum().backward()`.

Rows are `case(op, shapes, fn, ref, kind)`; the machinery (input kinds, checks) is the one of
tests/test_ops_gradcheck.py. References use numpy and math only, never engine code.
"""
import math

import numpy as np
import pytest

import tinygrad_like.functional as F
from test_ops_gradcheck import (
    check_every_input_gets_a_finite_gradient_of_its_shape,
    check_forward_matches_numpy,
    inputs_for,
)
from tinygrad_like import Tensor, gradcheck, gradgradcheck

CASES = []


def case(op, shapes, fn, ref, kind="normal", label=""):
    CASES.append(pytest.param(op, shapes, fn, ref, kind, id=f"{op}{':' + label if label else ''}{shapes}"))


np_erf = np.vectorize(math.erf)
np_lgamma = np.vectorize(math.lgamma)
ZEROS_AND_ONES = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 1.0]])


def np_logit(p):
    return np.log(p / (1 - p))


def np_polygamma(n, x, terms=200000):
    """(−1)ⁿ⁺¹ n! Σₖ (x + k)^−(n+1), summed directly, plus the integral of the rest (an independent form)."""
    k = np.arange(terms)
    sums = np.array([((v + k) ** -(n + 1.0)).sum() + (v + terms) ** -float(n) / n + (v + terms) ** -(n + 1.0) / 2
                     for v in np.ravel(x)])
    return ((-1) ** (n + 1) * math.factorial(n) * sums).reshape(np.shape(x))


def np_digamma(x, terms=200000):
    """ψ(x) = −γ + Σₖ (1/(k + 1) − 1/(x + k)), summed directly, the rest by Euler–Maclaurin (an independent form)."""
    k = np.arange(terms)
    def f(v, j):
        return 1 / (j + 1) - 1 / (v + j)
    sums = np.array([f(v, k).sum() + np.log((v + terms) / (terms + 1)) + f(v, terms) / 2 for v in np.ravel(x)])
    return (sums - np.euler_gamma).reshape(np.shape(x))


def np_erfinv(y):
    """erfinv by bisection on math.erf (60 halvings: float64 rounding)."""
    lo, hi = np.full(np.shape(y), -6.0), np.full(np.shape(y), 6.0)
    for _ in range(60):
        mid = (lo + hi) / 2
        below = np_erf(mid) < y
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    return (lo + hi) / 2


def np_sigmoid(x):
    return 1 / (1 + np.exp(-x))


def np_softplus(x):
    return np.logaddexp(0.0, x)     # log(e^0 + e^x), numpy's own stable form


def np_gather(x, dim, index):
    out = np.empty(index.shape)
    for pos in np.ndindex(index.shape):
        src = list(pos)
        src[dim] = index[pos]
        out[pos] = x[tuple(src)]
    return out


def np_scatter_add(x, dim, index, src):
    out = x.copy()
    for pos in np.ndindex(index.shape):
        dst = list(pos)
        dst[dim] = index[pos]
        out[tuple(dst)] += src[pos]
    return out


def np_scatter(x, dim, index, src):
    out = x.copy()
    for pos in np.ndindex(index.shape):  # in order, so the last writer wins
        dst = list(pos)
        dst[dim] = index[pos]
        out[tuple(dst)] = src[pos]
    return out


IDX = np.array([[0, 2, 1], [2, 2, 0]])           # dim 1 of a (2, 3) or (2, 4): repeats a position
IDX0 = np.array([[1, 0, 1, 0], [0, 0, 1, 1]])    # dim 0 of a (2, 4)
MASK = np.array([[True, False, True], [False, True, True]])
TARGET01 = np.array([[1.0, 0, 0, 1], [1, 1, 0, 0], [0, 1, 1, 1]])
SIGNS = np.array([-0.0, 0.0, -2.0])                         # copysign's other operand gets no gradient
XLOGY_ZEROS = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 1.0]])   # x = 0 (and y = 0 there): xlogy is 0, its gradient too
CAUSAL = np.triu(np.ones((4, 4), dtype=bool), k=1)


def _filled_in_place(scores):
    scores.masked_fill_(Tensor(CAUSAL), -5.0)             # recorded on the intermediate, as in PyTorch
    return scores

# elementwise math
case("sin", [(2, 3)], lambda x: x.sin(), np.sin)
case("cos", [(2, 3)], lambda x: x.cos(), np.cos)
case("erf", [(2, 3)], lambda x: x.erf(), np_erf)
case("log1p", [(2, 3)], lambda x: x.log1p(), np.log1p, kind="pos")
case("rsqrt", [(2, 3)], lambda x: x.rsqrt(), lambda x: 1 / np.sqrt(x), kind="pos")
case("log2", [(2, 3)], lambda x: x.log2(), np.log2, kind="pos")
case("exp2", [(2, 3)], lambda x: x.exp2(), np.exp2)
case("square", [(2, 3)], lambda x: x.square(), np.square)
case("pow", [(2, 3)], lambda x: x.pow(3), lambda x: x ** 3, label="method")

# issue 26: the elementwise family of tinygrad's operator tests (inputs kept inside each domain)
case("asin", [(2, 3)], lambda x: (x.tanh() * 0.8).asin(), lambda x: np.arcsin(np.tanh(x) * 0.8))
case("acos", [(2, 3)], lambda x: (x.tanh() * 0.8).acos(), lambda x: np.arccos(np.tanh(x) * 0.8))
case("atan", [(2, 3)], lambda x: (x * 3).atan(), lambda x: np.arctan(x * 3))
case("atan2", [(2, 3), (3,)], lambda y, x: y.atan2(x), np.arctan2)
case("atan2", [(2, 3)], lambda y: y.atan2(-2.0), lambda y: np.arctan2(y, -2.0), label="scalar")
case("sinh", [(2, 3)], lambda x: x.sinh(), np.sinh)
case("cosh", [(2, 3)], lambda x: x.cosh(), np.cosh)
case("log10", [(2, 3)], lambda x: x.log10(), np.log10, kind="pos")
case("expm1", [(2, 3)], lambda x: x.expm1(), np.expm1)
case("fmod", [(2, 3), (3,)], lambda x, y: (x - 1.3).fmod(y), lambda x, y: np.fmod(x - 1.3, y), kind="pos")
case("fmod", [(2, 3), (2, 3)], lambda x, y: (x * 7).fmod(-y), lambda x, y: np.fmod(x * 7, -y), kind="pos",
     label="negative-divisor")
case("remainder", [(2, 3), (3,)], lambda x, y: (x - 1.3).remainder(y), lambda x, y: np.remainder(x - 1.3, y),
     kind="pos")
case("elu", [(2, 3)], lambda x: x.elu(0.7), lambda x: np.where(x > 0, x, 0.7 * np.expm1(x)), kind="distinct")
case("leaky_relu", [(2, 3)], lambda x: x.leaky_relu(0.2), lambda x: np.where(x > 0, x, 0.2 * x), kind="distinct")
case("hardtanh", [(3, 4)], lambda x: x.hardtanh(-0.5, 0.6), lambda x: np.clip(x, -0.5, 0.6), kind="distinct")
case("relu6", [(3, 4)], lambda x: (x * 4).relu6(), lambda x: np.clip(x * 4, 0, 6), kind="distinct")
case("diagonal", [(2, 3, 4)], lambda x: x.diagonal(1, 0, 2), lambda x: np.diagonal(x, 1, 0, 2))
case("diagonal", [(3, 5)], lambda x: x.diagonal(-1), lambda x: np.diagonal(x, -1), label="below")
case("diag", [(3,)], lambda x: x.diag(1), lambda x: np.diag(x, 1))
case("diag", [(3,)], lambda x: x.diag(-2), lambda x: np.diag(x, -2), label="below")
case("diag", [(3, 4)], lambda x: x.diag(), np.diag, label="matrix")
case("diag_embed", [(2, 3)], lambda x: x.diag_embed(), lambda x: np.stack([np.diag(r) for r in x]))
case("tan", [(2, 3)], lambda x: (x * 0.4).tan(), lambda x: np.tan(x * 0.4))
case("hypot", [(2, 3), (3,)], lambda x, y: x.hypot(y), np.hypot)
case("logaddexp", [(2, 3), (3,)], lambda x, y: x.logaddexp(y), np.logaddexp, kind="distinct")
case("frac", [(2, 3)], lambda x: (x * 3).frac(), lambda x: x * 3 - np.trunc(x * 3), kind="distinct")
case("trace", [(3, 4)], lambda x: x.trace(), np.trace)
case("asinh", [(2, 3)], lambda x: (x * 3).asinh(), lambda x: np.arcsinh(x * 3))
case("acosh", [(2, 3)], lambda x: (x * x + 1.2).acosh(), lambda x: np.arccosh(x * x + 1.2))
case("atanh", [(2, 3)], lambda x: (x.tanh() * 0.8).atanh(), lambda x: np.arctanh(np.tanh(x) * 0.8))
case("hypot", [(2, 3)], lambda x: (x * 1e200).hypot(x * 2e200) * 1e-200, lambda x: np.hypot(x, 2 * x),
     label="huge")
case("copysign", [(2, 3)], lambda x: x.copysign(SIGNS), lambda x: np.copysign(x, SIGNS), kind="distinct")
case("xlogy", [(2, 3), (2, 3)], lambda x, y: x.xlogy(y), lambda x, y: x * np.log(y), kind="pos")
case("xlogy", [(2, 3), (2, 3)], lambda x, y: (x * XLOGY_ZEROS).xlogy(y * XLOGY_ZEROS),
     lambda x, y: np.where(XLOGY_ZEROS == 0, 0.0, x * np.log(np.where(XLOGY_ZEROS == 0, 1.0, y))), kind="pos",
     label="zeros")
case("logaddexp2", [(2, 3), (3,)], lambda x, y: x.logaddexp2(y), np.logaddexp2, kind="distinct")
case("logaddexp", [(2, 3)], lambda x: (x * 1e3).logaddexp(x * -1e3), lambda x: np.logaddexp(x * 1e3, x * -1e3),
     kind="distinct", label="wide")
case("float_power", [(2, 3), (3,)], lambda x, y: x.float_power(y), np.power, kind="pos")
case("fmax", [(2, 3), (2, 3)], lambda x, y: x.fmax(y), np.fmax, kind="distinct")
case("fmin", [(2, 3), (3,)], lambda x, y: x.fmin(y), np.fmin, kind="distinct")
case("nan_to_num", [(2, 3)], lambda x: x.nan_to_num(), lambda x: x)
case("ldexp", [(2, 3)], lambda x: x.ldexp(Tensor(np.array([-2, 0, 3]))), lambda x: x * 2.0 ** np.array([-2, 0, 3]))
case("ldexp", [(2, 3), (3,)], lambda x, e: x.ldexp(e), lambda x, e: x * 2.0 ** e, label="float-exponent")
case("erfc", [(2, 3)], lambda x: (x * 3).erfc(), lambda x: 1 - np_erf(x * 3))
case("erfinv", [(2, 3)], lambda x: (x.tanh() * 0.9).erfinv(), lambda x: np_erfinv(np.tanh(x) * 0.9))
case("lgamma", [(2, 3)], lambda x: (x * 3).lgamma(), lambda x: np_lgamma(x * 3), kind="pos")
case("lgamma", [(2, 3)], lambda x: (x - 3.5).lgamma(), lambda x: np_lgamma(x - 3.5), kind="pos", label="negative")
case("digamma", [(2, 3)], lambda x: (x * 3).digamma(), lambda x: np_digamma(x * 3), kind="pos")
case("digamma", [(2, 3)], lambda x: (x * 0.4 - 2.3).digamma(), lambda x: np_digamma(x * 0.4 - 2.3), kind="pos",
     label="negative")
case("polygamma", [(2, 3)], lambda x: (x * 3).polygamma(1), lambda x: np_polygamma(1, x * 3), kind="pos")
case("polygamma", [(2, 3)], lambda x: (x + 0.5).polygamma(3), lambda x: np_polygamma(3, x + 0.5), kind="pos",
     label="n3")
case("mvlgamma", [(2, 3)], lambda x: (x + 2).mvlgamma(3), lambda x: sum(np_lgamma(x + 2 - i / 2) for i in range(3))
     + 1.5 * np.log(np.pi), kind="pos")
case("i0", [(2, 3)], lambda x: (x * 4).i0(), lambda x: np.i0(x * 4))
case("logit", [(2, 3)], lambda x: x.sigmoid().logit(), lambda x: x)
case("logit", [(2, 3)], lambda x: (x * 0.3).logit(eps=0.2), lambda x: np_logit(np.clip(x * 0.3, 0.2, 0.8)), kind="pos",
     label="eps")
case("sinc", [(2, 3)], lambda x: (x * 2).sinc(), lambda x: np.sinc(x * 2))
case("sinc", [(2, 3)], lambda x: (x * ZEROS_AND_ONES).sinc(), lambda x: np.sinc(x * ZEROS_AND_ONES), label="at-0")
case("addcmul", [(2, 3), (3,), (2, 1)], lambda a, b, c: a.addcmul(b, c, value=0.5), lambda a, b, c: a + 0.5 * b * c)
case("addcdiv", [(2, 3), (3,), (2, 3)], lambda a, b, c: a.addcdiv(b, c, value=-2), lambda a, b, c: a - 2 * b / c,
     kind="pos")
case("diff", [(3, 5)], lambda x: x.diff(2, dim=1), lambda x: np.diff(x, 2, axis=1))
case("mm", [(2, 3), (3, 4)], lambda x, y: x.mm(y), np.matmul)
case("mv", [(2, 3), (3,)], lambda x, y: x.mv(y), np.matmul)
case("bmm", [(2, 3, 4), (2, 4, 2)], lambda x, y: x.bmm(y), np.matmul)
case("outer", [(3,), (4,)], lambda x, y: x.outer(y), np.outer)
case("movedim", [(2, 3, 4)], lambda x: x.movedim(0, -1), lambda x: np.moveaxis(x, 0, -1))
case("unbind", [(2, 3)], lambda x: x.unbind(1)[2], lambda x: x[:, 2])
case("narrow", [(4, 3)], lambda x: x.narrow(0, 1, 2), lambda x: x[1:3])
case("nansum", [(2, 3)], lambda x: (x.log()).nansum(1), lambda x: np.nansum(np.log(np.abs(x)) + 0 * x, 1),
     kind="pos")
case("masked_fill_", [(4, 3), (4, 3)], lambda q, k: _filled_in_place(q @ k.T),
     lambda q, k: np.where(CAUSAL, -5.0, q @ k.T), label="on-an-intermediate")
case("pow", [(2, 3), (3,)], lambda x, y: x.pow(y), np.power, kind="pos", label="method-tensor")
case("softplus", [(2, 3)], lambda x: x.softplus(), np_softplus)
case("softplus", [(2, 3)], lambda x: (x * 8).softplus(), lambda x: np_softplus(x * 8), label="wide")
case("softplus", [(2, 3)], lambda x: x.softplus(beta=2.0), lambda x: np_softplus(2 * x) / 2, label="beta")
case("clamp", [(3, 4)], lambda x: x.clamp(-0.5, 0.5), lambda x: np.clip(x, -0.5, 0.5), kind="distinct")
case("clamp", [(3, 4)], lambda x: x.clamp(max=0.2), lambda x: np.minimum(x, 0.2), kind="distinct", label="max")
case("clamp", [(3, 4), (4,)], lambda x, lo: x.clamp(min=lo), np.maximum, kind="distinct", label="tensor-bound")
case("clip", [(3, 4)], lambda x: x.clip(-0.5, 0.5), lambda x: np.clip(x, -0.5, 0.5), kind="distinct")
case("lerp", [(2, 3), (2, 3)], lambda a, b: a.lerp(b, 0.3), lambda a, b: a + 0.3 * (b - a))
case("lerp", [(2, 3), (2, 3), (3,)], lambda a, b, w: a.lerp(b, w), lambda a, b, w: a + w * (b - a), label="tensor-w")
case("tril", [(3, 4)], lambda x: x.tril(), lambda x: np.tril(x))
case("tril", [(2, 3, 4)], lambda x: x.tril(-1), lambda x: np.tril(x, -1), label="batched")
case("triu", [(3, 4)], lambda x: x.triu(1), lambda x: np.triu(x, 1))

# reductions and scans
case("cumsum", [(3, 4)], lambda x: x.cumsum(1), lambda x: np.cumsum(x, 1))
case("cumsum", [(3, 4)], lambda x: x.cumsum(-2) ** 2, lambda x: np.cumsum(x, 0) ** 2, label="squared")
case("cumprod", [(3, 4)], lambda x: x.cumprod(1), lambda x: np.cumprod(x, 1))
case("cumprod", [(3, 4)], lambda x: x.cumprod(0), lambda x: np.cumprod(x, 0), label="dim0")
case("norm", [(3, 4)], lambda x: x.norm(), lambda x: np.sqrt((x ** 2).sum()))
case("norm", [(3, 4)], lambda x: x.norm(axis=1, keepdim=True), lambda x: np.sqrt((x ** 2).sum(1, keepdims=True)),
     label="axis")
case("norm", [(3, 4)], lambda x: x.norm(1, axis=0), lambda x: np.abs(x).sum(0), kind="pos", label="p1")
case("norm", [(3, 4)], lambda x: x.norm(1), lambda x: np.abs(x).sum(), label="p1-signs")
case("norm", [(3, 4)], lambda x: x.norm(-math.inf, axis=1), lambda x: np.abs(x).min(1), kind="pos", label="-inf")
case("norm", [(3, 4)], lambda x: x.norm(math.inf), lambda x: np.abs(x).max(), kind="pos", label="inf")
case("norm", [(3, 4)], lambda x: x.norm(3, axis=1), lambda x: (np.abs(x) ** 3).sum(1) ** (1 / 3), kind="pos",
     label="p3")
case("var_mean", [(3, 4)], lambda x: x.var_mean(1)[0], lambda x: x.var(1, ddof=1), label="var")
case("var_mean", [(3, 4)], lambda x: x.var_mean(1, unbiased=False)[0], lambda x: x.var(1), label="population")
case("var_mean", [(3, 4)], lambda x: x.var_mean(0, keepdim=True)[1], lambda x: x.mean(0, keepdims=True), label="mean")
case("std_mean", [(3, 4)], lambda x: x.std_mean(correction=0)[0], lambda x: x.std())
case("std_mean", [(3, 4)], lambda x: x.std_mean(1)[1], lambda x: x.mean(1), label="mean")

# movement
case("split", [(5, 3)], lambda x: x.split(2)[2], lambda x: x[4:])
case("split", [(2, 6)], lambda x: x.split([1, 4, 1], dim=1)[1], lambda x: x[:, 1:5], label="sections")
case("chunk", [(2, 5)], lambda x: x.chunk(2, dim=-1)[0], lambda x: x[:, :3])
case("unflatten", [(2, 12)], lambda x: x.unflatten(1, (3, -1)), lambda x: x.reshape(2, 3, 4))
case("flatten", [(2, 3, 4, 5)], lambda x: x.flatten(1, 2), lambda x: x.reshape(2, 12, 5), label="start-end")
case("repeat", [(2, 3)], lambda x: x.repeat(2, 1, 3), lambda x: np.tile(x, (2, 1, 3)))
case("repeat_interleave", [(2, 3)], lambda x: x.repeat_interleave(2, dim=1), lambda x: np.repeat(x, 2, axis=1))
case("repeat_interleave", [(2, 3)], lambda x: x.repeat_interleave(2), lambda x: np.repeat(x.reshape(-1), 2),
     label="flat")
case("repeat_interleave", [(3, 2)], lambda x: x.repeat_interleave([2, 0, 1], dim=0),
     lambda x: np.repeat(x, [2, 0, 1], axis=0), label="counts")
case("flip", [(2, 3, 4)], lambda x: x.flip((0, 2)), lambda x: x[::-1, :, ::-1])
case("roll", [(3, 4)], lambda x: x.roll(1, 1), lambda x: np.roll(x, 1, 1))
case("roll", [(3, 4)], lambda x: x.roll((-1, 5), (0, 1)), lambda x: np.roll(x, (-1, 5), (0, 1)), label="two")
case("roll", [(3, 4)], lambda x: x.roll(2), lambda x: np.roll(x, 2), label="flat")
case("pad", [(2, 3)], lambda x: x.pad((1, 2)), lambda x: np.pad(x, ((0, 0), (1, 2))))
case("pad", [(2, 3)], lambda x: x.pad((0, 1, 2, 0), value=-1.5),
     lambda x: np.pad(x, ((2, 0), (0, 1)), constant_values=-1.5),
     label="two-dims")
case("pad", [(2, 3)], lambda x: x.pad((-1, 1)), lambda x: np.pad(x[:, 1:], ((0, 0), (0, 1))), label="crop")
case("clone", [(2, 3)], lambda x: x.clone(), lambda x: x.copy())

# selection
case("gather", [(2, 3)], lambda x: x.gather(1, IDX), lambda x: np_gather(x, 1, IDX))
case("gather", [(2, 4)], lambda x: x.gather(0, Tensor(IDX0)) ** 2, lambda x: np_gather(x, 0, IDX0) ** 2, label="dim0")
case("scatter_add", [(2, 4), (2, 3)], lambda x, s: x.scatter_add(1, IDX, s), lambda x, s: np_scatter_add(x, 1, IDX, s))
case("scatter_add", [(2, 4), (3, 3)], lambda x, s: x.scatter_add(1, IDX, s) ** 2,
     lambda x, s: np_scatter_add(x, 1, IDX, s[:2]) ** 2, label="larger-src")
case("scatter", [(2, 4), (2, 3)], lambda x, s: x.scatter(1, IDX, s), lambda x, s: np_scatter(x, 1, IDX, s))
case("scatter", [(2, 4)], lambda x: x.scatter(1, IDX, value=0.5),
     lambda x: np_scatter(x, 1, IDX, np.full(IDX.shape, 0.5)),
     label="value")
case("index_select", [(4, 3)], lambda x: x.index_select(0, [3, 0, 3]), lambda x: x[[3, 0, 3]])
case("index_select", [(2, 4)], lambda x: x.index_select(-1, Tensor([1, 1])), lambda x: x[:, [1, 1]], label="last")
case("masked_select", [(2, 3)], lambda x: x.masked_select(MASK), lambda x: x[MASK])
case("masked_select", [(3,)], lambda x: x.masked_select(MASK), lambda x: np.broadcast_to(x, (2, 3))[MASK],
     label="broadcast")
case("sort", [(3, 4)], lambda x: x.sort()[0], lambda x: np.sort(x, -1), kind="distinct")
case("sort", [(3, 4)], lambda x: x.sort(0, descending=True).values, lambda x: -np.sort(-x, 0), kind="distinct",
     label="descending")
case("topk", [(3, 5)], lambda x: x.topk(2).values, lambda x: -np.sort(-x, -1)[:, :2], kind="distinct")
case("topk", [(3, 5)], lambda x: x.topk(2, dim=0, largest=False)[0], lambda x: np.sort(x, 0)[:2], kind="distinct",
     label="smallest")

# functional nn
case("mse_loss", [(3, 4), (3, 4)], lambda x, y: F.mse_loss(x, y), lambda x, y: ((x - y) ** 2).mean())
case("mse_loss", [(3, 4), (3, 4)], lambda x, y: F.mse_loss(x, y, reduction="none"), lambda x, y: (x - y) ** 2,
     label="none")
case("binary_cross_entropy", [(3, 4), (3, 4)], lambda x, y: F.binary_cross_entropy(x.sigmoid(), y.sigmoid()),
     lambda x, y: -(np_sigmoid(y) * np.log(np_sigmoid(x)) + (1 - np_sigmoid(y)) * np.log(1 - np_sigmoid(x))).mean())
case("binary_cross_entropy", [(3, 4)], lambda x: F.binary_cross_entropy(x.sigmoid(), TARGET01, reduction="sum"),
     lambda x: -np.where(TARGET01 == 1, np.log(np_sigmoid(x)), np.log(1 - np_sigmoid(x))).sum(), label="sum")
case("binary_cross_entropy_with_logits", [(3, 4), (3, 4)],
     lambda x, y: F.binary_cross_entropy_with_logits(x, y.sigmoid()),
     lambda x, y: -(np_sigmoid(y) * np.log(np_sigmoid(x)) + (1 - np_sigmoid(y)) * np.log(1 - np_sigmoid(x))).mean())
case("binary_cross_entropy_with_logits", [(3, 4), (3, 4)],
     lambda x, y: F.binary_cross_entropy_with_logits(x, y.sigmoid(), pos_weight=3.0, reduction="none"),
     lambda x, y: -(3 * np_sigmoid(y) * np.log(np_sigmoid(x)) + (1 - np_sigmoid(y)) * np.log(1 - np_sigmoid(x))),
     label="pos_weight")
case("gelu", [(2, 3)], lambda x: F.gelu(x), lambda x: 0.5 * x * (1 + np_erf(x / np.sqrt(2))), label="exact")
case("gelu", [(2, 3)], lambda x: F.gelu(x, approximate="tanh"),
     lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))), label="tanh")


@pytest.mark.parametrize("op, shapes, fn, ref, kind", CASES)
def test_forward_matches_numpy(op, shapes, fn, ref, kind):
    check_forward_matches_numpy(shapes, fn, ref, kind)


@pytest.mark.parametrize("op, shapes, fn, ref, kind", CASES)
def test_gradcheck(op, shapes, fn, ref, kind):
    _, tensors = inputs_for(shapes, kind)
    assert gradcheck(fn, *tensors)


@pytest.mark.parametrize("op, shapes, fn, ref, kind", CASES)
def test_gradgradcheck(op, shapes, fn, ref, kind):
    _, tensors = inputs_for(shapes, kind)
    assert gradgradcheck(fn, *tensors)


@pytest.mark.parametrize("op, shapes, fn, ref, kind", CASES)
def test_backward_gives_every_input_a_finite_gradient_of_its_shape(op, shapes, fn, ref, kind):
    check_every_input_gets_a_finite_gradient_of_its_shape(shapes, fn, kind)

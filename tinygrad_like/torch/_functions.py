"""torch's functions of tensors (`torch.exp(x)`, `torch.sum(x, dim=1)`, `torch.cat(xs, dim=0)`, ...), each
one call of the engine's Tensor method of the same name with the same arguments: one implementation
per op, and what runs is the engine's op, drawable and differentiable.
"""
from __future__ import annotations

import numpy as np

import tinygrad_like
from tinygrad_like import Tensor
from tinygrad_like.einsum import einsum
from tinygrad_like.function import state

# torch.<name>(input, *args, **kwargs) is input.<name>(*args, **kwargs) for each of these (when the engine has it)
METHOD_FUNCTIONS = (
    "abs", "exp", "exp2", "log", "log1p", "log2", "sqrt", "rsqrt", "square", "sin", "cos", "tanh", "sigmoid",
    "relu", "erf", "sign", "floor", "ceil", "round", "clamp", "clip", "pow", "maximum", "minimum", "lerp",
    "sum", "mean", "prod", "std", "var", "std_mean", "var_mean", "max", "min", "amax", "amin", "argmax",
    "argmin", "logsumexp", "cumsum", "cumprod", "norm", "all", "any", "softmax", "log_softmax",
    "matmul", "dot", "reshape", "flatten", "unflatten", "transpose", "permute", "squeeze", "unsqueeze", "flip",
    "roll", "chunk", "split", "gather", "scatter", "scatter_add", "index_select", "masked_select", "masked_fill",
    "sort", "topk", "nonzero", "isclose", "allclose", "clone", "detach", "repeat_interleave", "one_hot",
)
# the elementwise family (issue 26), with PyTorch's other spellings and the in-place forms torch has, the same way
# (tests/test_torch_elementwise_surface.py calls each on PyTorch and on the facade)
ELEMENTWISE_FUNCTIONS = (
    "acos", "asin", "atan", "acosh", "asinh", "atanh", "arccos", "arcsin", "arctan", "arccosh", "arcsinh", "arctanh",
    "atan2", "arctan2", "cosh", "sinh", "tan", "expm1", "log10", "trunc", "fix", "frac", "reciprocal", "neg",
    "negative", "positive", "absolute", "deg2rad", "rad2deg", "copysign", "signbit", "heaviside", "hypot",
    "nextafter", "ldexp", "frexp", "float_power", "fmax", "fmin", "fmod", "remainder", "floor_divide", "true_divide",
    "div", "divide", "mul", "multiply", "add", "sub", "subtract", "xlogy", "logaddexp", "logaddexp2", "gcd", "lcm",
    "nan_to_num", "addcmul", "addcdiv", "clamp_min", "clamp_max", "eq", "ne", "not_equal", "gt", "ge", "lt", "le",
    "greater", "greater_equal", "less", "less_equal", "equal", "isnan", "isinf", "isfinite", "isposinf", "isneginf",
    "isreal", "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bitwise_not", "bitwise_left_shift", "bitwise_right_shift", "is_floating_point", "is_signed", "is_nonzero",
    "is_same_size", "adjoint", "detach_", "zero_", "fill_",
    "abs_", "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_", "arctanh_", "asin_",
    "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_", "clamp_min_", "clip_", "cos_", "cosh_",
    "deg2rad_", "erf_", "exp2_", "exp_", "expm1_", "fix_", "floor_", "frac_", "gcd_", "lcm_", "ldexp_", "log10_",
    "log1p_", "log2_", "log_", "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_", "relu_", "round_",
    "rsqrt_", "sigmoid_", "sin_", "sinh_", "sqrt_", "square_", "tan_", "tanh_", "trunc_", "xlogy_",
    "erfc", "erfc_", "erfinv", "lgamma", "digamma", "mvlgamma", "i0", "i0_", "logit", "logit_", "sinc", "sinc_",
    "sgn", "angle", "conj", "conj_physical", "conj_physical_", "resolve_conj", "resolve_neg", "is_complex", "is_conj",
    "is_neg", "real",
    "rsub", "fill", "isin", "polygamma",
)


def _method_function(name: str):
    def function(input, *args, **kwargs):
        if not isinstance(input, Tensor):
            input = Tensor(input)
        return getattr(input, name)(*args, **kwargs)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"torch.{name}(input, ...) is input.{name}(...), the engine's Tensor.{name}."
    return function


FUNCTIONS = {name: _method_function(name) for name in METHOD_FUNCTIONS + ELEMENTWISE_FUNCTIONS
             if hasattr(Tensor, name)}


def rsub(input, other, alpha=1) -> Tensor:
    """other − alpha·input: sub with the operands swapped."""
    return _as_tensor(input)._lift(other) - (input if alpha == 1 else input * alpha)


def fill(input, value) -> Tensor:
    """A new tensor of input's shape and dtype holding `value` everywhere (input.fill_, out of place)."""
    return _as_tensor(input).clone().detach().fill_(value)


def isin(elements, test_elements, *, assume_unique: bool = False, invert: bool = False) -> Tensor:
    """Boolean tensor of elements' shape: is each entry among test_elements (a tensor or a number)?"""
    elements = _as_tensor(elements)
    test = test_elements._data if isinstance(test_elements, Tensor) else np.asarray(test_elements)
    return elements._result(np.isin(elements._data, test, assume_unique=assume_unique, invert=invert), None)


def polygamma(n: int, input) -> Tensor:
    """ψ⁽ⁿ⁾(input): torch.polygamma takes n first (Tensor.polygamma(n) is input.polygamma(n))."""
    return _as_tensor(input).polygamma(n)


def real(input) -> Tensor:
    """The real part: a real tensor itself (Tensor.real is a property, as in PyTorch)."""
    return _as_tensor(input).real


def _as_tensor(value) -> Tensor:
    return value if isinstance(value, Tensor) else Tensor(value)


def _tensors(tensors, op: str) -> list:
    tensors = list(tensors)
    if not tensors or not all(isinstance(t, Tensor) for t in tensors):
        raise TypeError(f"{op}: expected a non-empty sequence of Tensors, got "
                        f"{[type(t).__name__ for t in tensors]}")
    return tensors


def cat(tensors, dim: int = 0) -> Tensor:
    """Join tensors along an existing dimension `dim`: Tensor.cat, or `_joined` when that records nothing."""
    tensors = _tensors(tensors, "cat")
    joined = _joined(tensors, dim)
    return Tensor.cat(*tensors, dim=dim) if joined is None else joined


def _joined(tensors: list, dim) -> Tensor | None:
    """Tensor.cat of tensors it would record no graph for (none needs a gradient, or grad mode is off;
    anomaly mode off) as one numpy call: the array Tensor.cat's Cat op makes, without the op's object and
    checks around it (a dataset's example is a few of these). None when Tensor.cat should run: a graph
    to record, or arguments it refuses (it names what is wrong)."""
    if state.detect_anomaly or type(dim) is not int or (state.grad_enabled and any(t.requires_grad for t in tensors)):
        return None
    arrays = [t._data for t in tensors]
    shape = arrays[0].shape
    if not -len(shape) <= dim < len(shape):
        return None
    axis = dim % len(shape)
    rest = shape[:axis] + shape[axis + 1:]
    for a in arrays:
        if a.shape[:axis] + a.shape[axis + 1:] != rest or a.ndim != len(shape):
            return None
    return Tensor._result(np.concatenate(arrays, axis=axis), None)


def stack(tensors, dim: int = 0) -> Tensor:
    """Join same-shaped tensors along a new dimension `dim`: Tensor.stack, or `_stacked` when that records nothing."""
    tensors = _tensors(tensors, "stack")
    stacked = _stacked(tensors, dim)
    return Tensor.stack(*tensors, dim=dim) if stacked is None else stacked


def _stacked(tensors: list, dim) -> Tensor | None:
    """Tensor.stack of tensors it would record no graph for, as one numpy call: the array Tensor.stack's
    Reshape per tensor and Cat make (nanoGPT's get_batch stacks 12 rows twice a step), without them. None
    when Tensor.stack should run: a graph to record, or arguments it refuses (it names what is wrong)."""
    if state.detect_anomaly or type(dim) is not int or (state.grad_enabled and any(t.requires_grad for t in tensors)):
        return None
    arrays = [t._data for t in tensors]
    shape = arrays[0].shape
    if not -len(shape) - 1 <= dim <= len(shape) or any(a.shape != shape for a in arrays):
        return None
    return Tensor._result(np.stack(arrays, axis=dim), None)


def where(condition, input=None, other=None) -> Tensor:
    """where(condition, input, other): input where condition holds, other elsewhere (broadcast);
    where(condition) alone: the indices of the true entries, one tensor per dimension."""
    condition = condition if isinstance(condition, Tensor) else Tensor(np.asarray(condition))
    if input is None and other is None:
        return condition.nonzero(as_tuple=True)
    return condition.where(input, other)


def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    return input.tril(diagonal)


def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    return input.triu(diagonal)


def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    """Batched matrix product: (b, n, m) @ (b, m, p) -> (b, n, p) (Tensor.bmm, dialect/aliases.py)."""
    return input.bmm(mat2)


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """The outer product of two vectors: (n,), (m,) -> (n, m) (Tensor.outer, dialect/aliases.py)."""
    return input.outer(vec2)


def set_num_threads(n: int) -> None:
    """The engine's thread pool (products, attention, the fast kernels) runs on n threads (tinygrad_like's),
    and the engine's default allocator setting comes with it (fast/memory.tune_malloc_by_default; off with
    TINYGRAD_LIKE_TUNE_MALLOC=0). The engine takes that setting with the thread count it picks itself, at the
    first product; a thread count set beforehand skips it, and a PyTorch program that calls
    torch.set_num_threads knows nothing of the engine's allocator, so without this its large temporary
    arrays would go back to the OS and come back as fresh pages at every step."""
    tinygrad_like.set_num_threads(n, allocator=True)


def get_num_threads() -> int:
    return tinygrad_like.get_num_threads()


PRINT_OPTIONS = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                     sci_mode=None) -> None:
    """Record PyTorch's print options (profile "default", "short" or "full" first, then the numbers given)
    in PRINT_OPTIONS, which tensor printing through the facade reads."""
    profiles = {"default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
                "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
                "full": dict(precision=4, threshold=np.inf, edgeitems=3, linewidth=80)}
    if profile is not None:
        if profile not in profiles:
            raise ValueError(f"set_printoptions: profile must be one of {sorted(profiles)}, got {profile!r}")
        PRINT_OPTIONS.update(profiles[profile])
    given = dict(precision=precision, threshold=threshold, edgeitems=edgeitems, linewidth=linewidth)
    PRINT_OPTIONS.update({k: v for k, v in given.items() if v is not None})
    PRINT_OPTIONS["sci_mode"] = sci_mode


FUNCTIONS.update(cat=cat, concat=cat, concatenate=cat, stack=stack, where=where, tril=tril, triu=triu, bmm=bmm,
                 einsum=einsum, outer=outer, ger=outer, set_num_threads=set_num_threads,
                 get_num_threads=get_num_threads, set_printoptions=set_printoptions, rsub=rsub, fill=fill, isin=isin,
                 polygamma=polygamma, real=real)

from tinygrad_like.torch._array_functions import ARRAY_FUNCTIONS  # noqa: E402 (linear algebra, indexing, shapes, statistics)

FUNCTIONS.update(ARRAY_FUNCTIONS)

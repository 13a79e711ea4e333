"""`Tensor`: a numpy array that remembers how it was made, so gradients can flow back through it.

Here: construction, the one way op outputs are made (`_result`), the arithmetic, and the basic
reductions and movements, each a call of a primitive of ops.py; then `backward`. The rest of the
Tensor's methods live by idea in the modules it inherits from, one mixin class each: creation,
elementwise_math, reductions, movement, selection, composites (the ops the fast path may fuse) and
protocols (len, float, repr, ...). PyTorch's names (size(), to, add_, `dim=` for `axis=`, ...) are not
here: the PyTorch dialect, tinygrad_like/dialect/, attaches them when tinygrad_like is imported.
"""
from __future__ import annotations

import itertools

import numpy as np

from tinygrad_like import dtypes, ops
from tinygrad_like.autograd import backward
from tinygrad_like.composites import CompositeMixin
from tinygrad_like.creation import CreationMixin, shape_args
from tinygrad_like.elementwise_math import ElementwiseMathMixin
from tinygrad_like.errors import DimError, ShapeError
from tinygrad_like.function import Function, current_scope
from tinygrad_like.movement import MovementMixin
from tinygrad_like.protocols import PythonProtocolsMixin
from tinygrad_like.reductions import ReductionMixin
from tinygrad_like.selection import SelectionMixin

# The tape: every tensor takes the next number when it is made, after the tensors it is computed from,
# so backward walks the graph newest number first, the forward pass played backwards (autograd.py).
tape = itertools.count()


class Tensor(CreationMixin, ElementwiseMathMixin, ReductionMixin, MovementMixin, SelectionMixin, CompositeMixin,
             PythonProtocolsMixin):
    """An n-dimensional array with reverse-mode autodiff.

    >>> x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
    >>> (x * x).sum().backward(); x.grad.numpy()        # d(Σx²)/dx = 2x
    array([2., 4., 6.], dtype=float32)
    """

    __slots__ = ("_data", "grad", "requires_grad", "_ctx", "name", "scope", "_last_grad", "_tape_index", "__weakref__")
    __array_priority__ = 1000  # so that numpy_array * tensor calls Tensor.__rmul__

    def __init__(self, data, requires_grad: bool = False, dtype=None, name: str | None = None):
        if isinstance(data, Tensor):
            data = data._data
        if isinstance(data, np.generic):
            data = np.asarray(data)  # a numpy scalar keeps its dtype, like a numpy array
        if isinstance(data, np.ndarray):
            array = data if dtype is None else data.astype(dtype, copy=False)
        else:
            array = np.asarray(data, dtype=dtypes.as_dtype(dtype))
            if dtype is None and array.dtype == np.float64:
                array = array.astype(np.float32)  # Python floats and lists default to float32
        if requires_grad and array.dtype.kind != "f":
            raise TypeError(f"Tensor: only floating point tensors can require grad, got dtype {array.dtype} "
                            "(integer tensors hold indices; convert with .float() first if you meant values)")
        self._data, self.grad, self.requires_grad, self._ctx = array, None, requires_grad, None
        self.name, self.scope, self._last_grad = name, current_scope(), None
        self._tape_index = next(tape)

    @classmethod
    def _result(cls, data: np.ndarray, ctx) -> "Tensor":
        """The one way an op's output is made (Function.apply calls it): `data` as it is, with no
        conversion and no checks, put on the tape; `ctx` is the op that made it (None: a constant)."""
        t = object.__new__(cls)        # without __init__, whose conversions and checks data needs none of
        t._data = data
        t.grad = None
        t.requires_grad = ctx is not None
        t._ctx = ctx
        t.name = None
        t.scope = ctx.scope if ctx is not None else ""
        t._last_grad = None
        t._tape_index = next(tape)
        return t

    # ------------------------------------------------------------ properties
    @property
    def shape(self) -> tuple: return self._data.shape
    @property
    def dtype(self) -> np.dtype: return self._data.dtype
    @property
    def ndim(self) -> int: return self._data.ndim
    @property
    def T(self) -> "Tensor": return self.permute(*reversed(range(self.ndim)))

    def numpy(self) -> np.ndarray: return self._data
    def item(self): return self._data.item()
    def tolist(self): return self._data.tolist()
    def detach(self) -> "Tensor": return Tensor._result(self._data, None)

    def cast(self, dtype) -> "Tensor":
        dtype = np.dtype(dtype)
        return self if dtype == self.dtype else ops.Cast.apply(self, dtype=dtype)

    def float(self) -> "Tensor": return self.cast(np.float32)
    def double(self) -> "Tensor": return self.cast(np.float64)

    # ------------------------------------------------------------ unary ops
    def _floating(self) -> "Tensor":
        """self, or an integer or bool tensor as float32: float ops of integers give floats, as in PyTorch."""
        return self if self._data.dtype.kind == "f" else self.cast(dtypes.DEFAULT_FLOAT)

    def __neg__(self): return ops.Neg.apply(self)
    def __pos__(self): return self
    def __abs__(self): return self.abs()
    def exp(self): return ops.Exp.apply(self._floating())
    def log(self): return ops.Log.apply(self._floating())
    def sqrt(self): return ops.Sqrt.apply(self._floating())
    def tanh(self): return ops.Tanh.apply(self._floating())
    def sigmoid(self): return ops.Sigmoid.apply(self._floating())
    def relu(self): return ops.Relu.apply(self)
    def abs(self): return ops.Abs.apply(self)
    def sign(self) -> "Tensor":
        """Constant (no gradient): the derivative of sign is zero wherever it exists."""
        return Tensor._result(np.sign(self._data), None)

    # ------------------------------------------------------------ binary ops
    # operands are promoted by PyTorch's rules first (_pair); reflected ops swap the pair
    def _lift(self, other) -> "Tensor":
        """Turn a Python or numpy number into a Tensor of our dtype, so float32 stays float32."""
        if isinstance(other, Tensor):
            return other
        if self.dtype.kind == "f" and np.ndim(other) == 0 and not isinstance(other, np.ndarray):
            return Tensor._result(np.asarray(other, dtype=self.dtype), None)
        return Tensor(other)

    def _pair(self, other, op: str = "") -> tuple:
        """self and other as two Tensors of one dtype, by PyTorch's promotion (tinygrad_like/dtypes.py):
        a Python number keeps a float tensor's dtype, an integer tensor meeting a float takes the float's."""
        if isinstance(other, Tensor):
            if other._data.dtype == self._data.dtype:   # one dtype already: nothing to promote
                return self, other
        elif isinstance(other, (int, float)) and self._data.dtype.kind == "f":
            return self, Tensor._result(np.asarray(other, dtype=self._data.dtype), None)
        if op == "-" and (self._data.dtype == bool or isinstance(other, Tensor) and other._data.dtype == bool):
            raise TypeError(f"-: subtracting with a bool tensor is not supported (as in PyTorch); got {self.dtype} "
                            f"and {other.dtype if isinstance(other, Tensor) else type(other).__name__}, "
                            "use ~ or ^ for bools")
        if not isinstance(other, (Tensor, int, float, np.generic)):
            other = Tensor(other)
        dtype = dtypes.result_type(self._data, other._data if isinstance(other, Tensor) else other)
        if not isinstance(other, Tensor):
            other = Tensor._result(np.asarray(other, dtype=dtype), None)
        return self.cast(dtype), other.cast(dtype)

    def _floats(self, other) -> tuple:
        """_pair, then integer or bool operands as float32: true division of integers gives the default float."""
        a, b = self._pair(other)
        return (a, b) if a._data.dtype.kind == "f" else (a.cast(dtypes.DEFAULT_FLOAT), b.cast(dtypes.DEFAULT_FLOAT))

    def __add__(self, other): return ops.Add.apply(*self._pair(other))
    def __radd__(self, other): return ops.Add.apply(*self._pair(other)[::-1])
    def __sub__(self, other): return ops.Sub.apply(*self._pair(other, "-"))
    def __rsub__(self, other): return ops.Sub.apply(*self._pair(other, "-")[::-1])
    def __mul__(self, other): return ops.Mul.apply(*self._pair(other))
    def __rmul__(self, other): return ops.Mul.apply(*self._pair(other)[::-1])
    def __truediv__(self, other): return ops.Div.apply(*self._floats(other))
    def __rtruediv__(self, other): return ops.Div.apply(*self._floats(other)[::-1])

    def maximum(self, other): return ops.Maximum.apply(*self._pair(other))
    def minimum(self, other): return ops.Minimum.apply(*self._pair(other))

    def matmul(self, other):
        """Matrix product with numpy's rules: batch dimensions broadcast; a 1-D side is a vector.
        The dtypes are promoted as for `*` (an int64 one-hot @ float32 weights is float32)."""
        a, other = self._pair(other)
        x = a.unsqueeze(0) if a.ndim == 1 else a
        y = other.unsqueeze(-1) if other.ndim == 1 else other
        if x.ndim < 2 or y.ndim < 2:
            raise ShapeError(f"matmul: needs at least 1-D operands, got shapes {self.shape} and {other.shape}")
        if x.shape[-1] != y.shape[-2]:
            raise ShapeError(f"matmul: inner dimensions differ: {self.shape} @ {other.shape}")
        if x.ndim > 2 and y.ndim == 2:                  # (B, T, k) @ (k, m): one big (B·T, k) @ (k, m) product
            out = ops.Matmul.apply(x.reshape(-1, x.shape[-1]), y).reshape(*x.shape[:-1], y.shape[-1])
        else:
            out = ops.Matmul.apply(x, y)                # (..., n, m), n = 1 / m = 1 for a vector side
        if self.ndim == 1:
            out = out.squeeze(-2)
        return out.squeeze(-1) if other.ndim == 1 else out

    __matmul__ = dot = matmul

    def __rmatmul__(self, other): return self._lift(other).matmul(self)

    # ------------------------------------------------------------ reduce ops
    def _axes(self, axis) -> tuple | None:
        if axis is None:
            return None
        axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
        for a in axes:
            if not -max(self.ndim, 1) <= a < max(self.ndim, 1):
                raise DimError(f"axis {a} is out of range for a tensor of shape {self.shape}")
        if self.ndim == 0:
            return ()    # dim 0 or -1 of a 0-d tensor is the tensor itself, as in PyTorch
        return tuple(sorted(int(a) % self.ndim for a in axes))

    def sum(self, axis=None, keepdim=False, dtype=None):
        """Σ over `axis` (all axes when None). dtype: cast first, e.g. to accumulate float32 in float64."""
        x = self if dtype is None else self.cast(dtype)
        return ops.Sum.apply(x, axis=x._axes(axis), keepdim=keepdim)

    def amax(self, axis=None, keepdim=False):
        """The largest entry over `axis` (an int, a tuple, or None for all). Tied entries share the gradient."""
        return ops.Max.apply(self, axis=self._axes(axis), keepdim=keepdim)

    def amin(self, axis=None, keepdim=False):
        """The smallest entry over `axis`, like amax."""
        return ops.Min.apply(self, axis=self._axes(axis), keepdim=keepdim)

    # ------------------------------------------------------------ movement ops
    def reshape(self, *shape):
        shape = shape_args(shape)
        return self if shape == self.shape else ops.Reshape.apply(self, shape=shape)

    def _dim(self, dim: int, op: str, extra: int = 0) -> int:
        """`dim` in [-n, n), n = ndim + extra, as an index >= 0. Out of range is an error, not a silent wrap."""
        n = self.ndim + extra
        if not -n <= dim < n:
            raise DimError(f"{op}: dim {dim} is out of range for a tensor of shape {self.shape}")
        return dim % n

    def permute(self, *order):
        order = shape_args(order)
        if sorted(o + self.ndim if o < 0 else o for o in order) != list(range(self.ndim)):
            raise ValueError(f"permute: {order} is not a permutation of the {self.ndim} axes of shape {self.shape}")
        return ops.Permute.apply(self, order=tuple(o % self.ndim for o in order))

    def expand(self, *shape):
        shape = shape_args(shape)
        shape = tuple(s if n == -1 else n for s, n in zip((1,) * (len(shape) - self.ndim) + self.shape, shape))
        return self if shape == self.shape else ops.Expand.apply(self, shape=shape)

    def __getitem__(self, index):
        index = _convert_index(index)
        try:
            return ops.Getitem.apply(self, index=index)
        except IndexError as e:
            raise IndexError(f"getitem: {e} (tensor shape {self.shape})") from None

    @staticmethod
    def cat(*tensors, dim=0):
        """Join tensors along an existing axis: cat(a (2,3), b (4,3)) is (6,3)."""
        tensors = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
        first = tensors[0]
        axis = first._dim(dim, "cat")
        rest = first.shape[:axis] + first.shape[axis + 1:]      # the shape every input must have outside dim
        for t in tensors[1:]:
            if t.ndim != first.ndim or t.shape[:axis] + t.shape[axis + 1:] != rest:
                raise ShapeError(f"cat: shapes {first.shape} and {t.shape} differ outside dim {dim}")
        return ops.Cat.apply(*tensors, axis=axis)

    # ------------------------------------------------------------ selection
    def where(self, x, y):
        """`cond.where(x, y)`: x where cond is true, else y (cond is self, a boolean tensor)."""
        x = x if isinstance(x, Tensor) else (y._lift(x) if isinstance(y, Tensor) else Tensor(x))
        y = x._lift(y)
        return ops.Where.apply(self if self.dtype == bool else self.cast(bool), x, y)

    def masked_fill(self, mask, value):
        """Replace the entries where `mask` is true by `value` (e.g. -inf before a softmax)."""
        mask = mask if isinstance(mask, Tensor) else Tensor(mask)
        return mask.where(self._lift(value), self)

    # ------------------------------------------------------------ autograd
    def backward(self, gradient=None, retain_graph=False, create_graph=False) -> None:
        """Accumulate d(self)/d(leaf) into the `.grad` of every leaf that requires grad.

        `gradient` is d(loss)/d(self) and may be omitted for a scalar. The graph's arrays are freed
        afterwards unless `retain_graph` (its skeleton stays, for draw_graph); `create_graph` records
        the backward pass, for higher-order gradients.
        """
        # the fast path puts fast/walk.py's walk in this method's place; inside composed() it calls this one
        backward(self, gradient, retain_graph, create_graph)


Function.make_tensor = Tensor._result


def _convert_index(index):
    """Tensors and lists inside an index become numpy integer arrays."""
    return tuple(map(_index_part, index)) if isinstance(index, tuple) else _index_part(index)


def _index_part(i):
    if isinstance(i, Tensor):
        return i._data
    if isinstance(i, list):
        return np.asarray(i)
    return i

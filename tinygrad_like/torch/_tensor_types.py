"""PyTorch's legacy tensor types, torch.FloatTensor, torch.LongTensor, ...: a call makes an engine Tensor of
that dtype (`torch.LongTensor([1, 2])`, `torch.FloatTensor(2, 3)` of zeros, where PyTorch leaves it
uninitialised), and `isinstance(x, torch.LongTensor)` asks whether x is a Tensor of that dtype."""
from __future__ import annotations

import builtins

import numpy as np

from tinygrad_like import Tensor
from tinygrad_like.torch import _tensors

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor", "ShortTensor",
           "CharTensor", "ByteTensor", "BoolTensor"]


class _TensorType(type):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor) and obj.dtype == cls.dtype

    def __call__(cls, *args, device=None):
        _tensors.check_device(device, cls.__name__)
        sizes = args[0] if len(args) == 1 and isinstance(args[0], (tuple, _tensors.Size)) else args
        if all(isinstance(s, builtins.int) and not isinstance(s, builtins.bool) for s in sizes):
            return Tensor(np.zeros(tuple(sizes), dtype=cls.dtype))          # FloatTensor(2, 3), FloatTensor()
        if len(args) != 1:
            raise TypeError(f"torch.{cls.__name__}: pass sizes (ints) or one sequence of data, got {args!r}")
        data = args[0].numpy() if isinstance(args[0], Tensor) else args[0]
        return Tensor(np.array(data, dtype=cls.dtype))

    def __repr__(cls):
        return f"<class 'torch.{cls.__name__}'>"


def _tensor_type(name: str, dtype):
    return _TensorType(name, (), {"dtype": dtype, "__doc__": f"torch.{name}: a Tensor of dtype {dtype}."})


FloatTensor, DoubleTensor = _tensor_type("FloatTensor", _tensors.float32), _tensor_type("DoubleTensor",
                                                                                      _tensors.float64)
HalfTensor = _tensor_type("HalfTensor", _tensors.float16)
BFloat16Tensor = _tensor_type("BFloat16Tensor", _tensors.bfloat16)
LongTensor, IntTensor = _tensor_type("LongTensor", _tensors.int64), _tensor_type("IntTensor", _tensors.int32)
ShortTensor, CharTensor = _tensor_type("ShortTensor", _tensors.int16), _tensor_type("CharTensor", _tensors.int8)
ByteTensor, BoolTensor = _tensor_type("ByteTensor", _tensors.uint8), _tensor_type("BoolTensor", _tensors.bool)

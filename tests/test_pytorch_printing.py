"""Printing as PyTorch prints through the facade (dialect/printing.py), and as the engine prints outside it."""
import subprocess
import sys

import numpy as np
import pytest

from tinygrad_like import Tensor
from tinygrad_like.dialect.attributes import Size
from tinygrad_like.dialect.printing import is_pytorch_printing, pytorch_printing, use_pytorch_printing

EXAMPLES = [  # (values, dtype, requires_grad, what PyTorch prints: typed here from PyTorch 2.13's output)
    ([[1.0, 2.0], [3.0, 4.0]], np.float32, True, "tensor([[1., 2.],\n        [3., 4.]], requires_grad=True)"),
    ([1.5, 2.0], np.float32, False, "tensor([1.5000, 2.0000])"),
    ([1, 2], np.int64, False, "tensor([1, 2])"),
    ([1, 2], np.int32, False, "tensor([1, 2], dtype=torch.int32)"),
    ([True, False], np.bool_, False, "tensor([ True, False])"),
    (3.0, np.float32, False, "tensor(3.)"),
    ([1e-5, 1.0], np.float32, False, "tensor([1.0000e-05, 1.0000e+00])"),
    ([1.0, 2.5], np.float64, True, "tensor([1.0000, 2.5000], dtype=torch.float64, requires_grad=True)"),
    ([-1.0, -2.5], np.float32, False, "tensor([-1.0000, -2.5000])"),
    ([np.inf, 0.5], np.float32, False, "tensor([   inf, 0.5000])"),
]


@pytest.mark.parametrize("values, dtype, requires_grad, printed", EXAMPLES)
def test_repr_through_the_facade_is_pytorchs(values, dtype, requires_grad, printed):
    x = Tensor(np.array(values, dtype=dtype), requires_grad=requires_grad)
    with pytorch_printing():
        assert repr(x) == str(x) == printed


def test_an_op_output_shows_its_grad_fn_and_an_empty_tensor_its_size():
    with pytorch_printing():
        assert repr(Tensor([1.0, 2.0], requires_grad=True) * 2) == "tensor([2., 4.], grad_fn=<MulBackward0>)"
        assert repr(Tensor.zeros(0, 3)) == "tensor([], size=(0, 3))"


def test_shape_and_size_are_torch_size_and_still_tuples():
    x = Tensor.zeros(1, 4)
    with pytorch_printing():
        shape = x.shape
        assert repr(shape) == str(shape) == "torch.Size([1, 4])" and repr(x.size()) == "torch.Size([1, 4])"
        assert isinstance(shape, Size) and isinstance(shape, tuple)
        assert shape == (1, 4) and (1, 4) == shape and hash(shape) == hash((1, 4)) and {shape: 1}[(1, 4)] == 1
        assert shape[1] == 4 and shape[-1:] == (4,) and list(shape) == [1, 4] and shape + (2,) == (1, 4, 2)
        assert np.zeros(shape).shape == (1, 4) and x.reshape(shape[::-1]).shape == (4, 1)
        assert f"{x.shape}" == "torch.Size([1, 4])"
        with pytest.raises(ValueError, match=r"torch\.Size\(\[1, 4\]\)"):  # messages show shapes as PyTorch's
            x @ Tensor.zeros(3, 2)


def test_outside_the_facade_the_engine_prints_its_own_way():
    x = Tensor([1.0, 2.0], requires_grad=True)
    assert not is_pytorch_printing()
    assert repr(x) == "Tensor([1., 2.], dtype=float32, requires_grad=True)"
    assert repr(x.shape) == "(2,)" and type(x.shape) is tuple and repr(x.size()) == "Size([2])"
    with pytorch_printing():
        assert repr(x) == "tensor([1., 2.], requires_grad=True)"
    assert repr(x) == "Tensor([1., 2.], dtype=float32, requires_grad=True)"    # switched back after the block
    use_pytorch_printing()
    assert is_pytorch_printing()
    use_pytorch_printing(False)
    assert repr(x.shape) == "(2,)"


def test_importing_the_facade_switches_a_fresh_process_to_pytorchs_printing():
    script = ("from tinygrad_like import Tensor; x = Tensor([[1.0, 2.0]]); print(repr(x), x.shape); "
              "import tinygrad_like.torch as torch; print(x, x.shape, torch.ones(2).shape)")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["Tensor([[1., 2.]], dtype=float32) (1, 2)",
                                "tensor([[1., 2.]]) torch.Size([1, 2]) torch.Size([2])"]


def test_printing_matches_pytorch_on_random_tensors():
    torch = pytest.importorskip("torch", reason="compares with PyTorch's own printing")
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((2, 3, 4)).astype(np.float32), rng.integers(0, 65, (4, 8)),
              np.arange(20.0).reshape(4, 5), rng.standard_normal(7) * 1e-6, np.array([0.0, -0.0, 1.0])]
    with pytorch_printing():
        for a in arrays:
            assert repr(Tensor(a)) == repr(torch.tensor(a))

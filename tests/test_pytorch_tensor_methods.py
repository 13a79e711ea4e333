"""The Tensor methods real PyTorch programs call (nanoGPT, minGPT, makemore, course notebooks): conversions,
new_* constructors, and what happens with an attribute PyTorch has and the engine does not."""
import numpy as np
import pytest

from tinygrad_like import Tensor
from tinygrad_like.dialect import missing
from tinygrad_like.errors import NotInEngine


def test_contiguous_is_the_tensor_and_a_view_after_a_transpose_still_works():
    x = Tensor(np.arange(24.0).reshape(2, 3, 4), requires_grad=True)
    y = x.transpose(1, 2)                                     # nanoGPT: y.transpose(1, 2).contiguous().view(B, T, C)
    assert y.contiguous() is y and not y.is_contiguous() and x.is_contiguous()
    z = y.contiguous().view(2, 12)
    np.testing.assert_array_equal(z.numpy(), np.arange(24.0).reshape(2, 3, 4).transpose(0, 2, 1).reshape(2, 12))
    z.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((2, 3, 4)))


def test_nelement_counts_entries():
    assert Tensor.zeros(3, 4, 5).nelement() == 60 == Tensor.zeros(3, 4, 5).numel()
    assert Tensor(1.0).nelement() == 1 and Tensor.zeros(0, 3).nelement() == 0


@pytest.mark.parametrize("method, dtype", [("long", np.int64), ("int", np.int32), ("short", np.int16),
                                           ("char", np.int8), ("byte", np.uint8), ("bool", np.bool_)])
def test_integer_and_bool_conversions(method, dtype):
    x = Tensor([-1.7, 0.0, 2.9])
    y = getattr(x, method)()
    assert y.dtype == dtype
    expected = np.array([-1.7, 0.0, 2.9]).astype(dtype)      # toward zero, as C and PyTorch convert
    np.testing.assert_array_equal(y.numpy(), expected)


def test_long_of_a_long_is_itself_and_type_as_casts_with_gradient():
    ids = Tensor([1, 2])
    assert ids.long() is ids
    x = Tensor([1.0, 2.0], requires_grad=True)
    y = x.type_as(Tensor([0.0], dtype=np.float64))
    assert y.dtype == np.float64
    (y * y).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])
    assert x.grad.dtype == np.float32


@pytest.mark.parametrize("name", ["half", "bfloat16"])
def test_half_precision_is_refused_with_the_reason(name):
    with pytest.raises(NotInEngine, match=rf"Tensor\.{name}: .*float32 and float64 only"):
        getattr(Tensor([1.0]), name)()


def test_cuda_gives_the_cpu_only_message_and_is_cuda_is_false():
    x = Tensor([1.0])
    assert x.is_cuda is False and x.is_cpu is True
    for call in (lambda: x.cuda(), lambda: x.cuda(0), lambda: x.to("cuda")):
        with pytest.raises(RuntimeError, match="runs on the CPU only"):
            call()


def test_new_constructors_take_the_tensors_dtype():
    x = Tensor([1.0, 2.0], dtype=np.float64)
    for made, value in ((x.new_zeros(2, 3), 0), (x.new_zeros((2, 3)), 0), (x.new_ones([2, 3]), 1),
                        (x.new_full((2, 3), 7.5), 7.5), (x.new_empty(2, 3), 0)):
        assert made.shape == (2, 3) and made.dtype == np.float64 and (made.numpy() == value).all()
        assert not made.requires_grad
    assert x.new_zeros(2, dtype=np.int64).dtype == np.int64
    assert x.new_ones(2, requires_grad=True).requires_grad
    ids = Tensor([3, 4])
    assert ids.new_zeros(5).dtype == np.int64
    source = np.array([1.0, 2.0])
    t = x.new_tensor(source)
    source[0] = 9.0                                           # a copy, as in PyTorch
    assert t.tolist() == [1.0, 2.0] and t.dtype == np.float64
    assert Tensor([0.0]).new_tensor([1, 2]).dtype == np.float32
    with pytest.raises(RuntimeError, match="CPU only"):
        x.new_zeros(2, device="cuda")


def test_element_size_and_data_ptr():
    assert Tensor([1.0]).element_size() == 4 and Tensor([1.0], dtype=np.float64).element_size() == 8
    assert Tensor([True]).element_size() == 1 and Tensor([1]).element_size() == 8
    p = Tensor([1.0, 2.0], requires_grad=True)
    assert p.data.data_ptr() == p.data_ptr() != Tensor([1.0, 2.0]).data_ptr()


# ---------------------------------------------------------------- missing attributes

def test_an_attribute_pytorch_has_and_we_do_not_is_named_with_the_reason():
    x = Tensor([1.0])
    with pytest.raises(NotInEngine, match=r"Tensor\.stft: PyTorch's Tensor has it.*no Fourier transforms"):
        x.stft(4)
    with pytest.raises(AttributeError, match=r"Tensor\.to_sparse: .*dense numpy arrays only"):
        x.to_sparse()
    with pytest.raises(NotImplementedError, match=r"Tensor\.svd: .*no matrix decompositions"):
        x.svd()


def test_a_name_pytorch_does_not_have_keeps_pythons_error_and_probes_still_answer():
    x = Tensor([1.0])
    with pytest.raises(AttributeError, match=r"'Tensor' object has no attribute 'contiguos'") as info:
        x.contiguos()                                          # a typo, not a missing feature
    assert not isinstance(info.value, NotInEngine)
    assert not hasattr(x, "stft") and getattr(x, "stft", None) is None
    assert hasattr(x, "contiguous")


def test_every_recorded_pytorch_name_is_supported_or_refused_with_a_reason():
    names = missing.pytorch_names()
    assert len(names) > 500 and {"add", "contiguous", "stft", "view"} <= names
    x = Tensor([1.0])
    for name in sorted(names):
        try:
            getattr(x, name)
        except NotInEngine as e:
            assert name in str(e) and missing.reason(name) in str(e)
        except Exception as e:                                 # a supported property may refuse this tensor
            assert not isinstance(e, AttributeError) or isinstance(e, NotInEngine), (name, e)


def test_reasons_match_whole_names_not_parts_of_them():
    assert missing.reason("qr").startswith("no matrix decompositions or solvers")
    assert missing.reason("sqrt_") == missing.reason("absolute") == "not in the engine yet"   # sqrt_ holds "qr"
    assert missing.reason("to_sparse_csr") == "dense numpy arrays only"


def test_the_recorded_names_are_the_coverage_reports():
    import json
    from pathlib import Path
    recorded = json.loads((Path(__file__).parents[1] / "docs" / "torch_names.json").read_text())
    assert missing.pytorch_names() == set(recorded["names"]["torch.Tensor"])
    assert missing.NAMES.read_text() == missing.names_file(recorded["names"]["torch.Tensor"], recorded["version"])

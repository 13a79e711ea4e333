"""In-place methods on a tensor of a recorded graph (dialect/inplace.py): recorded as a node of their own,
with the out-of-place op's gradient; refused at backward, naming both ops, when an op had read the old value."""
import numpy as np
import pytest

from tinygrad_like import Tensor, draw_graph, gradcheck, gradgradcheck

CAUSAL = np.triu(np.ones((4, 4), dtype=bool), k=1)


def attention_in_place(q, k, v):
    """Attention written the textbook way: scores filled in place before the softmax."""
    scores = q @ k.T / 2.0
    scores.masked_fill_(Tensor(CAUSAL), float("-inf"))
    return scores.softmax(-1) @ v


def attention_out_of_place(q, k, v):
    return (q @ k.T / 2.0).masked_fill(Tensor(CAUSAL), float("-inf")).softmax(-1) @ v


def qkv(seed=0):
    rng = np.random.default_rng(seed)
    return [Tensor(rng.standard_normal((4, 3)), requires_grad=True) for _ in range(3)]


def test_masked_fill_in_place_on_scores_gradchecks_and_equals_the_out_of_place_version():
    assert gradcheck(attention_in_place, *qkv())
    assert gradgradcheck(attention_in_place, *qkv())
    a, b = qkv(), qkv()
    u = Tensor(np.random.default_rng(1).standard_normal((4, 3)))
    (attention_in_place(*a) * u).sum().backward()
    (attention_out_of_place(*b) * u).sum().backward()
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x.grad.numpy(), y.grad.numpy())


@pytest.mark.parametrize("name, inplace, plain", [
    ("add_", lambda h, c: h.add_(c, alpha=-0.5), lambda h, c: h - 0.5 * c),
    ("sub_", lambda h, c: h.sub_(c), lambda h, c: h - c),
    ("mul_", lambda h, c: h.mul_(c), lambda h, c: h * c),
    ("div_", lambda h, c: h.div_(c + 3.0), lambda h, c: h / (c + 3.0)),
    ("clamp_", lambda h, c: h.clamp_(-0.3, 0.4), lambda h, c: h.clamp(-0.3, 0.4)),
    ("zero_", lambda h, c: h.zero_(), lambda h, c: h * 0),
    ("fill_", lambda h, c: h.fill_(c.sum()), lambda h, c: h * 0 + c.sum()),
    ("copy_", lambda h, c: h.copy_(c * 2), lambda h, c: h * 0 + c * 2),
])
def test_every_named_in_place_method_on_an_intermediate_is_recorded(name, inplace, plain):
    rng = np.random.default_rng(2)
    x, c = (Tensor(rng.standard_normal((2, 3)), requires_grad=True) for _ in range(2))

    def f(x, c):
        h = x.tanh()
        assert inplace(h, c) is h                             # the method returns the tensor itself ...
        assert type(h.grad_fn).__name__ == name               # ... now made by a node named after it
        return h * (c + 2.0)

    assert gradcheck(f, x, c)
    expected = plain(x.tanh(), c) * (c + 2.0)
    np.testing.assert_allclose(f(x, c).numpy(), expected.numpy(), rtol=1e-12)


def test_the_written_tensor_keeps_its_identity_dtype_and_requires_grad():
    x = Tensor([1.0, 2.0], requires_grad=True)
    h = x * 3
    ref = h
    h.add_(1.0)
    assert h is ref and h.dtype == np.float32 and h.requires_grad and h.tolist() == [4.0, 7.0]
    h.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])


def test_a_constant_receiving_a_value_that_requires_grad_becomes_part_of_the_graph():
    buf = Tensor.zeros(3)
    w = Tensor([2.0], requires_grad=True)
    buf.add_(w * 5)                                           # PyTorch allows this too
    assert buf.requires_grad and buf.tolist() == [10.0, 10.0, 10.0]
    buf.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [15.0])


def test_an_op_that_read_the_old_value_is_refused_at_backward_naming_both_ops():
    x = Tensor([1.0, 2.0], requires_grad=True)
    h = x.exp()
    y = h * h                                                 # Mul reads h, and its backward needs h
    h.mul_(2.0)
    with pytest.raises(RuntimeError, match=r"backward: Mul read a tensor of shape \(2,\) that mul_ then changed "
                                           r"in place.*Write mul_ out of place"):
        y.sum().backward()


def test_reading_after_the_write_is_fine_and_sees_the_new_value():
    x = Tensor([1.0, 2.0], requires_grad=True)
    h = x * 1.0
    h.mul_(3.0)
    (h * h).sum().backward()                                  # d(9x²) = 18x
    np.testing.assert_allclose(x.grad.numpy(), [18.0, 36.0])


def test_a_leaf_that_requires_grad_is_still_refused_while_recording():
    w = Tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="masked_fill_: a leaf tensor that requires grad"):
        w.masked_fill_(Tensor([True]), 0.0)


def test_the_writes_that_are_not_recorded_are_still_refused_while_recording():
    h = Tensor([1.0, 2.0], requires_grad=True) * 2
    with pytest.raises(RuntimeError, match=r"setitem: .*not recorded"):
        h[0] = 5.0
    with pytest.raises(RuntimeError, match=r"normal_: .*not recorded"):
        h.normal_()


def test_draw_graph_shows_the_in_place_op_as_a_node():
    q, k, v = qkv()
    out = attention_in_place(q, k, v)
    assert "masked_fill_" in draw_graph(out).source
    out.sum().backward(retain_graph=True)
    assert "masked_fill_Backward" in draw_graph(out, direction="backward").source


def test_without_a_graph_the_write_goes_into_the_same_array():
    h = Tensor([1.0, 2.0]) * 2
    array = h.numpy()
    h.masked_fill_(Tensor([True, False]), -1.0)
    assert h.numpy() is array and h.tolist() == [-1.0, 4.0] and h.grad_fn is None


def test_with_pytorch_the_same_gradients():
    torch = pytest.importorskip("torch", reason="compares with PyTorch's gradients")
    a = qkv()
    (attention_in_place(*a) ** 2).sum().backward()
    t = [torch.tensor(x.numpy(), requires_grad=True) for x in qkv()]
    scores = t[0] @ t[1].T / 2.0
    scores.masked_fill_(torch.tensor(CAUSAL), float("-inf"))
    ((scores.softmax(-1) @ t[2]) ** 2).sum().backward()
    for ours, theirs in zip(a, t):
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-10, atol=1e-12)

"""Bad input gets a clear error naming the op and the shapes (or saying what to do), never a wrong answer."""
import re

import numpy as np
import pytest

from tinygrad_like import GradcheckError, Tensor, gradcheck
from tinygrad_like.function import Function

# (what, the call, error type, a regex the message must match)
ERRORS = [
    ("add", lambda: Tensor.zeros(2, 3) + Tensor.zeros(4, 5), ValueError,
     r"^add: .*\(input shapes \(2, 3\) and \(4, 5\)\)"),
    ("mul", lambda: Tensor.zeros(3) * Tensor.zeros(4), ValueError, r"^mul: .*\(3,\) and \(4,\)"),
    ("matmul", lambda: Tensor.zeros(2, 3) @ Tensor.zeros(4, 5), ValueError,
     r"^matmul: inner dimensions.*\(2, 3\) @ \(4, 5\)"),
    ("matmul-batch", lambda: Tensor.zeros(2, 2, 3) @ Tensor.zeros(3, 3, 4), ValueError,
     r"^matmul: .*\(2, 2, 3\) and \(3, 3, 4\)"),
    ("matmul-0d", lambda: Tensor.zeros(3) @ Tensor(2.0), ValueError, r"matmul.*\(3,\) and \(\)"),
    ("reshape", lambda: Tensor.zeros(2, 3).reshape(4, 2), ValueError, r"^reshape: .*size 6.*\(4,2\).*\(2, 3\)"),
    ("cat", lambda: Tensor.cat(Tensor.zeros(2, 3), Tensor.zeros(2, 4)), ValueError,
     r"^cat: shapes \(2, 3\) and \(2, 4\)"),
    ("cat-ndim", lambda: Tensor.cat(Tensor.zeros(2, 3), Tensor.zeros(3)), ValueError,
     r"^cat: shapes \(2, 3\) and \(3,\)"),
    ("stack", lambda: Tensor.stack(Tensor.zeros(2, 3), Tensor.zeros(3, 2)), ValueError,
     r"^stack: .*\(2, 3\) and \(3, 2\)"),
    ("expand", lambda: Tensor.zeros(2, 3).expand(4, 3), ValueError, r"^expand: .*\(2, 3\)"),
    ("permute", lambda: Tensor.zeros(2, 3).permute(0, 0), ValueError, r"^permute: .*not a permutation.*\(2, 3\)"),
    ("unsqueeze", lambda: Tensor.zeros(2, 3).unsqueeze(3), ValueError, r"^unsqueeze: dim 3 is out of range.*\(2, 3\)"),
    ("squeeze", lambda: Tensor.zeros(2, 1).squeeze(-3), ValueError, r"^squeeze: dim -3 is out of range.*\(2, 1\)"),
    ("flatten", lambda: Tensor.zeros(2, 3).flatten(2), ValueError, r"^flatten: dim 2 is out of range.*\(2, 3\)"),
    ("transpose", lambda: Tensor.zeros(2, 3).transpose(0, 2), ValueError, r"^transpose: dim 2 is out of range"),
    ("cat-dim", lambda: Tensor.cat(Tensor.zeros(2, 3), Tensor.zeros(2, 3), dim=2), ValueError, r"^cat: dim 2 is out"),
    ("stack-dim", lambda: Tensor.stack(Tensor.zeros(2, 3), Tensor.zeros(2, 3), dim=-4), ValueError,
     r"^stack: dim -4 is"),
    ("permute-range", lambda: Tensor.zeros(2, 3).permute(0, -3), ValueError,
     r"^permute: \(0, -3\) is not a permutation"),
    ("sum-axis", lambda: Tensor.zeros(2, 3).sum(axis=2), ValueError, r"axis 2 is out of range.*\(2, 3\)"),
    ("max-axis", lambda: Tensor.zeros(2, 3).max(axis=-3), ValueError, r"axis -3 is out of range.*\(2, 3\)"),
    ("where", lambda: Tensor([True, False]).where(Tensor.zeros(3), 0.0), ValueError, r"^where: .*\(2,\)"),
    ("getitem", lambda: Tensor.zeros(3, 4)[5], IndexError, r"^getitem: index 5 .* size 3 \(tensor shape \(3, 4\)\)"),
    ("getitem-neg", lambda: Tensor.zeros(3, 4)[:, -7], IndexError, r"index -7 .* size 4"),
    ("getitem-gather", lambda: Tensor.zeros(3, 4)[[0, 9]], IndexError, r"index 9 .* size 3 \(tensor shape \(3, 4\)\)"),
    ("linear-bias", lambda: Tensor.zeros(2, 3).linear(Tensor.zeros(4, 3), Tensor.zeros(1)), ValueError,
     r"^linear: bias \(1,\) does not fit weight \(4, 3\)"),
    ("multihead_attention", lambda: Tensor.zeros(2, 5, 10).multihead_attention(2), ValueError,
     r"^multihead_attention: input \(2, 5, 10\) with n_head=2, n_kv_head=2"),
    ("multihead_attention-groups", lambda: Tensor.zeros(2, 5, 12).multihead_attention(3, 2), ValueError,
     r"n_head=3, n_kv_head=2 .*divisible"),
    ("crossentropy-shape", lambda: Tensor.zeros(2, 3, 5).sparse_categorical_crossentropy(np.zeros(6, dtype=int)),
     ValueError, r"logits \(2, 3, 5\) need targets of shape \(2, 3\), got \(6,\)"),
    ("crossentropy-class", lambda: Tensor.zeros(2, 5).sparse_categorical_crossentropy([1, 7]), IndexError,
     r"target 7 is outside \[0, 5\)"),
    ("attention", lambda: Tensor.zeros(4, 8).scaled_dot_product_attention(Tensor.zeros(4, 6), Tensor.zeros(4, 8)),
     ValueError, r"query \(4, 8\), key \(4, 6\) and value \(4, 8\)"),
    ("dropout", lambda: Tensor.zeros(3).dropout(1.0), ValueError, r"p must be in \[0, 1\), got 1.0"),
    ("int-grad", lambda: Tensor(np.arange(3), requires_grad=True), TypeError, r"floating point.*int64"),
]


@pytest.mark.parametrize("what, call, error, message", ERRORS, ids=[e[0] for e in ERRORS])
def test_bad_input_raises_a_clear_error(what, call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_backward_on_a_non_scalar_without_gradient_says_what_to_do():
    y = Tensor.ones(2, 3, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match=r"shape \(2, 3\) is not a scalar.*\.sum\(\).*gradient="):
        y.backward()
    with pytest.raises(ValueError, match=r"gradient of shape \(3,\) does not match output of shape \(2, 3\)"):
        y.backward(Tensor.ones(3))


def test_backward_on_a_tensor_that_does_not_require_grad():
    with pytest.raises(RuntimeError, match="does not require grad.*requires_grad=True.*no_grad"):
        (Tensor.ones(3) * 2).sum().backward()


def test_second_backward_through_a_freed_graph_says_retain_graph():
    x = Tensor.ones(3, requires_grad=True)
    h = x.exp()
    y = (h * 2).sum()
    y.backward()
    with pytest.raises(RuntimeError, match=r"already freed.*retain_graph=True"):
        y.backward()
    with pytest.raises(RuntimeError, match=r"already freed.*retain_graph=True"):
        (h * 3).sum().backward()                   # a new op on top of a freed part of the graph


class BadMul(Function):
    """x * y with a deliberately wrong gradient for y (1.5 x instead of x); x's is right."""
    def forward(self, x, y): return x * y
    def backward(self, grad, out):
        x, y = self.parents
        return grad * y, grad * x * 1.5


def test_gradcheck_failure_names_the_input_the_element_and_both_values():
    rng = np.random.default_rng(0)
    x = Tensor(rng.uniform(1, 2, (2, 3)), requires_grad=True, name="x")
    w = Tensor(rng.uniform(1, 2, (2, 3)), requires_grad=True, name="w")
    with pytest.raises(GradcheckError) as info:
        gradcheck(lambda a, b: BadMul.apply(a, b), x, w)
    message = str(info.value)
    found = re.search(r"input 1 \(w\) of shape \(2, 3\), element \(0, 0\): analytic (\S+) vs numeric (\S+)", message)
    assert found, message
    analytic, numeric = float(found[1]), float(found[2])
    assert analytic == pytest.approx(1.5 * numeric, rel=1e-6)  # exactly the factor the bad rule adds
    assert numeric != 0
    # the right half of the rule passes: only x checked
    assert gradcheck(lambda a, b: BadMul.apply(a, b), x, Tensor(w.numpy()))


def test_gradcheck_without_any_input_requiring_grad_is_an_error():
    with pytest.raises(ValueError, match="no input has requires_grad=True"):
        gradcheck(lambda a: a * 2, Tensor.ones(3))

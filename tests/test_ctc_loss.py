"""F.ctc_loss / nn.CTCLoss (issue 26): values and gradients against PyTorch (skipped without it), against
alignments counted by hand, and the gradient with respect to log_probs against finite differences (PyTorch's
own differs from it by e^log_probs, which cancels through log_softmax: checked here too)."""
import math

import numpy as np
import pytest

import tinygrad_like.torch as tl
from tinygrad_like import Tensor, gradcheck

tF = tl.nn.functional
rng = np.random.default_rng(0)
T, N, C = 12, 3, 5
LOGITS = rng.standard_normal((T, N, C))
PADDED = np.array([[1, 2, 2, 0], [3, 1, 0, 0], [4, 4, 4, 4]])     # a repeated label needs a blank between
INPUT_LENGTHS, TARGET_LENGTHS = np.array([12, 9, 8]), np.array([3, 2, 4])
CONCATENATED = np.concatenate([row[:n] for row, n in zip(PADDED, TARGET_LENGTHS)])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("targets", [PADDED, CONCATENATED], ids=["padded", "concatenated"])
def test_ctc_loss_and_the_logits_gradient_match_pytorch(reduction, targets):
    torch = pytest.importorskip("torch", reason="compares against PyTorch")
    theirs_x, ours_x = torch.tensor(LOGITS, requires_grad=True), tl.tensor(LOGITS, requires_grad=True)
    theirs = torch.nn.functional.ctc_loss(theirs_x.log_softmax(2), torch.tensor(targets), torch.tensor(INPUT_LENGTHS),
                                          torch.tensor(TARGET_LENGTHS), blank=0, reduction=reduction)
    ours = tF.ctc_loss(ours_x.log_softmax(2), tl.tensor(targets), tl.tensor(INPUT_LENGTHS), tl.tensor(TARGET_LENGTHS),
                       blank=0, reduction=reduction)
    theirs.sum().backward()
    ours.sum().backward()
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours_x.grad.numpy(), theirs_x.grad.numpy(), rtol=1e-10, atol=1e-14)


def test_pytorchs_log_probs_gradient_is_ours_plus_the_probabilities():
    torch = pytest.importorskip("torch", reason="compares against PyTorch")
    lp = torch.tensor(LOGITS).log_softmax(2).requires_grad_()
    torch.nn.functional.ctc_loss(lp, torch.tensor(PADDED), torch.tensor(INPUT_LENGTHS), torch.tensor(TARGET_LENGTHS),
                                 reduction="sum").backward()
    ours = tl.tensor(lp.detach().numpy(), requires_grad=True)
    tF.ctc_loss(ours, tl.tensor(PADDED), tl.tensor(INPUT_LENGTHS), tl.tensor(TARGET_LENGTHS),
                reduction="sum").backward()
    within = (np.arange(T)[:, None] < INPUT_LENGTHS[None, :])[:, :, None]
    np.testing.assert_allclose(lp.grad.numpy(), ours.grad.numpy() + np.exp(lp.detach().numpy()) * within, atol=1e-12)


def test_ctc_loss_gradient_with_respect_to_log_probs_is_the_true_one():
    lp = Tensor(rng.standard_normal((6, 2, 4)), requires_grad=True)          # any numbers: the loss is defined
    assert gradcheck(lambda x: tF.ctc_loss(x, np.array([[1, 1], [3, 2]]), [6, 5], [2, 2], reduction="sum"), lp)


def test_ctc_loss_counts_the_alignments():
    y = np.array([[0.5, 0.3, 0.2], [0.1, 0.6, 0.3]])                        # 2 steps, blank 0, target [1]
    # alignments of [1] over 2 steps: (1, 1), (blank, 1), (1, blank)
    p = y[0, 1] * y[1, 1] + y[0, 0] * y[1, 1] + y[0, 1] * y[1, 0]
    loss = tF.ctc_loss(tl.tensor(np.log(y)), tl.tensor([1]), [2], [1], reduction="sum")
    assert loss.item() == pytest.approx(-math.log(p), rel=1e-6)
    # [1, 1] over 3 steps has one alignment, (1, blank, 1); over 2 steps none: inf, or 0 with zero_infinity
    y3 = np.full((3, 3), 1 / 3)
    one_path = tF.ctc_loss(tl.tensor(np.log(y3)), [1, 1], [3], [2], reduction="sum")
    assert one_path.item() == pytest.approx(3 * math.log(3))
    impossible = tl.tensor(np.log(y3[:2]), requires_grad=True)
    assert tF.ctc_loss(impossible, [1, 1], [2], [2], reduction="sum").item() == math.inf
    zeroed = tF.ctc_loss(impossible, [1, 1], [2], [2], reduction="sum", zero_infinity=True)
    zeroed.backward()
    assert zeroed.item() == 0 and np.all(impossible.grad.numpy() == 0)


def test_ctc_module_and_torch_form_and_errors():
    lp = tl.tensor(LOGITS).log_softmax(2)
    args = (tl.tensor(PADDED), tl.tensor(INPUT_LENGTHS), tl.tensor(TARGET_LENGTHS))
    assert tl.nn.CTCLoss(reduction="sum")(lp, *args).item() == tF.ctc_loss(lp, *args, reduction="sum").item()
    assert tl.ctc_loss(lp, *args, 0, 2).item() == tF.ctc_loss(lp, *args, reduction="sum").item()   # 2: PyTorch's sum
    with pytest.raises(ValueError, match="target labels must be classes in \\[0, 5\\) other than blank 1"):
        tF.ctc_loss(lp, *args, blank=1)
    with pytest.raises(ValueError, match="input_lengths \\[13, 9, 8\\] must be in \\[1, 12\\]"):
        tF.ctc_loss(lp, args[0], [13, 9, 8], args[2])
    x = Tensor(rng.standard_normal((4, 3)), requires_grad=True)
    loss = tF.ctc_loss(x.log_softmax(1), [1], [4], [1])
    with pytest.raises(NotImplementedError, match="ctc_loss: no second derivative"):
        loss.backward(create_graph=True)

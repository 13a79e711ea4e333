"""The makemore lecture's opening cells (demos/bigram_streams.py: count table, multinomial sampling with
Generator().manual_seed(2147483647), W = torch.randn((27, 27), generator=g), gradient descent) print on the
facade exactly what they print on PyTorch: compared live when PyTorch is installed, and against the lines
PyTorch 2.13 printed, stored below, when it is not."""
from __future__ import annotations

import pathlib
import sys

import pytest

import tinygrad_like.torch as facade

DEMOS = pathlib.Path(__file__).resolve().parents[1] / "demos"
if str(DEMOS) not in sys.path:
    sys.path.append(str(DEMOS))

import bigram_streams  # noqa: E402

NAMES_TXT = pathlib.Path("/work/programs/makemore/names.txt")

# printed by PyTorch 2.13 (CPU) running bigram_streams.lecture
PYTORCH_MADE_UP = [
    "counts: cexza.", "counts: lima.", "counts: mikal.", "counts: za.", "counts: xh.", "counts: nll/n 1.8493",
    "network: step 0 loss 3.7856", "network: step 1 loss 3.0834", "network: step 4 loss 2.2406", "network: texza.",
    "network: ligliuikalqza.", "network: xhkelinimi.", "network: na.", "network: n.",
]
PYTORCH_NAMES_TXT = [   # the names and the step-0 loss the lecture shows
    "counts: cexze.", "counts: momasurailezitynn.", "counts: konimittain.", "counts: llayn.", "counts: ka.",
    "counts: nll/n 2.4544", "network: step 0 loss 3.7686", "network: texzmkloglquszipczktxhkmpmzistttwinmlgdukzka.",
    "network: zr.", "network: rocxtpucjwtsc.", "network: gmtokmxczisqytxugkwpt.", "network: dajkkluydjmscdgu.",
]


@pytest.fixture(scope="module")
def made_up():
    return bigram_streams.made_up_names(800)


def test_made_up_names_print_pytorchs_lines(made_up):
    assert bigram_streams.lecture(facade, made_up, steps=5) == PYTORCH_MADE_UP


def test_made_up_names_live_against_pytorch(made_up):
    torch = pytest.importorskip("torch", reason="the live comparison needs PyTorch; the stored lines run without")
    assert bigram_streams.lecture(facade, made_up, steps=5) == bigram_streams.lecture(torch, made_up, steps=5)


@pytest.mark.skipif(not NAMES_TXT.exists(), reason=f"makemore's names.txt is not at {NAMES_TXT}")
def test_the_lectures_names_and_loss():
    words = NAMES_TXT.read_text().split()
    assert bigram_streams.lecture(facade, words, steps=1) == PYTORCH_NAMES_TXT


def test_the_demo_prints_both_engines_side_by_side(capsys):
    result = bigram_streams.main(["--steps", "2"])
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("tinygrad_like.torch")
    assert result["ours"][0] in out.splitlines()[1]
    if result["theirs"] is not None:
        assert result["ours"] == result["theirs"]
        assert f"same lines: {len(result['ours'])} of {len(result['ours'])}" in out
    else:
        assert "(PyTorch is not installed)" in out

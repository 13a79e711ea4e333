"""The lecture notebooks in notebooks/ run clean from a fresh kernel, show what they promise, and their
stored outputs are what a fresh run prints.

Each notebook is executed once per test session with nbclient (notebooks/run_all.py: execute), in a
kernel of this interpreter. Then:
- no cell raised (nbclient stops at the first error and names the cell);
- the stored outputs are not stale: every code cell has the same kinds of output as a fresh run, text
  outputs are equal except for their numbers, and numbers are equal to a relative 1e-3 (printed numbers
  carry 3 to 4 digits). Cells tagged `training` compare numbers to 5% (a float32 run on another BLAS
  drifts a little), cells tagged `timing` not at all (seconds, tokens per second), and cells tagged
  `volatile` are not compared (sampled text). Graph pictures are compared by the words and numbers of
  their labels (the SVG `<text>` elements), not by layout; PNG plots only by being there;
- key outputs: the chapter's numbers (notebook 2), an SVG in every cell tagged `graph`, a falling
  loss (notebook 4), the exact parameter counts (notebooks 3 and 5).

Skipped when nbclient, nbformat or ipykernel is missing: `pip install -e ".[notebooks]"`.
"""
from __future__ import annotations

import html
import importlib.util
import json
import math
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
for module in ("nbclient", "nbformat", "ipykernel"):
    pytest.importorskip(module, reason=f"{module} is missing: pip install -e \".[notebooks]\" runs the notebooks")

_spec = importlib.util.spec_from_file_location("run_all", NOTEBOOKS / "run_all.py")
run_all = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(run_all)

PATHS = run_all.notebooks()
NAMES = [p.stem for p in PATHS]
NUMBER = re.compile(r"[-+]?(?:\d+(?:,\d{3})+|\d*\.\d+|\d+)(?:[eE][-+]?\d+)?")
_executed: dict[str, object] = {}


def _kernels_compiled() -> None:
    """Compile the fast kernels in this process before any notebook runs: on a machine that has never
    compiled them, the first program to use them prints one line about it on stderr
    (fast/kernels/first_use.py), an output no stored notebook has. Without numba there is nothing to
    compile."""
    try:
        import numpy as np

        from tinygrad_like.fast.kernels import first_use
    except ImportError:
        return
    for dtype in (np.float32, np.float64):
        first_use.prepare(np.dtype(dtype))


def executed(name: str):
    """The notebook run from a fresh kernel (once per session), after the kernels are compiled."""
    if not _executed:
        _kernels_compiled()
    if name not in _executed:
        _executed[name] = run_all.execute(NOTEBOOKS / f"{name}.ipynb")
    return _executed[name]


def stored(name: str) -> dict:
    return json.loads((NOTEBOOKS / f"{name}.ipynb").read_text(encoding="utf-8"))


def code_cells(nb) -> list:
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else value


def svg_labels(svg: str) -> list[str]:
    """The words of a Graphviz SVG: its <text> elements, in order (layout coordinates left out)."""
    return re.findall(r"<text[^>]*>([^<]*)</text>", svg)


def outputs(cell) -> list[tuple[str, str]]:
    """(kind, comparable text) per output of a code cell."""
    found = []
    for o in cell.get("outputs", []):
        kind = o["output_type"]
        if kind == "stream":  # one print can arrive in several pieces: join consecutive ones
            if found and found[-1][0] == f"stream:{o['name']}":
                found[-1] = (found[-1][0], found[-1][1] + _text(o["text"]))
            else:
                found.append((f"stream:{o['name']}", _text(o["text"])))
        elif kind in ("display_data", "execute_result"):
            data = o["data"]
            if "image/svg+xml" in data:
                found.append(("svg", "\n".join(svg_labels(_text(data["image/svg+xml"])))))
            elif "image/png" in data:
                found.append(("png", ""))
            elif "text/html" in data:
                found.append(("html", _text(data["text/html"])))
            else:
                found.append(("text", _text(data.get("text/plain", ""))))
        else:
            found.append((kind, o.get("ename", "") + ": " + o.get("evalue", "")))
    return found


def same_text(a: str, b: str, rtol: float | None) -> str | None:
    """None when a and b agree: the same words, numbers to rtol (rtol None: numbers not compared)."""
    if NUMBER.split(a) != NUMBER.split(b):
        return "the text differs"
    if rtol is None:
        return None
    for x, y in zip(NUMBER.findall(a), NUMBER.findall(b)):
        u, v = float(x.replace(",", "")), float(y.replace(",", ""))
        if abs(u - v) > 1e-6 + rtol * abs(v):
            return f"{x} now, {y} stored"
    return None


@pytest.mark.parametrize("name", NAMES)
def test_notebook_runs_and_its_stored_outputs_are_fresh(name):
    fresh, saved = code_cells(executed(name)), code_cells(stored(name))
    assert len(fresh) == len(saved)
    for i, (new, old) in enumerate(zip(fresh, saved)):
        tags = old.get("metadata", {}).get("tags", [])
        if "volatile" in tags:
            continue
        rtol = None if "timing" in tags else 0.05 if "training" in tags else 1e-3
        now, before = outputs(new), outputs(old)
        where = f"{name}, code cell {i + 1} ({_text(old['source'])[:60]!r}...)"
        assert [k for k, _ in now] == [k for k, _ in before], \
            f"{where}: outputs {[k for k, _ in now]} now, {[k for k, _ in before]} stored: rerun notebooks/run_all.py"
        for (kind, a), (_, b) in zip(now, before):
            problem = same_text(a, b, rtol)
            assert problem is None, f"{where}, {kind} output: {problem} (stale? rerun notebooks/run_all.py)"


def all_text(nb) -> str:
    return "\n".join(text for c in code_cells(nb) for _, text in outputs(c))


def test_there_are_seven_notebooks_each_with_exercises_and_hidden_answers():
    assert sorted(name.split("_")[0] for name in NAMES) == ["1", "2", "3", "4", "5", "6", "7"], NAMES
    for name in NAMES:
        nb = stored(name)
        markdown = "\n".join(_text(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
        assert "## Exercises" in markdown and "### Answers" in markdown, name
        answers = [c for c in code_cells(nb) if "answer" in c["metadata"].get("tags", [])]
        assert len(answers) >= 2 and all(c["metadata"]["jupyter"]["source_hidden"] for c in answers), name
        assert (NOTEBOOKS / f"{name}.ipynb").stat().st_size < 600_000, f"{name} is too big for a web page"


@pytest.mark.parametrize("name", NAMES)
def test_every_graph_cell_shows_an_svg(name):
    graph_cells = [c for c in code_cells(executed(name)) if "graph" in c["metadata"].get("tags", [])]
    if name.startswith(("1_", "2_", "3_")):
        assert len(graph_cells) >= 2, f"{name} should draw graphs"
    for cell in graph_cells:
        svgs = [text for kind, text in outputs(cell) if kind == "svg"]
        assert svgs and all(svgs), f"{name}: no SVG in the graph cell {_text(cell['source'])[:60]!r}"


def test_backprop_by_hand_notebook_agrees_with_the_engine_on_every_gradient():
    """Notebook 6: each hand-derived gradient of the PyTorch-style MLP is allclose to the engine's, and the
    tanh rule fed the engine's own incoming gradient reproduces its bits."""
    text = all_text(executed("6_backprop_by_hand"))
    rows = re.findall(r"^(\w+) +exact: (True|False) +allclose: (True|False) +largest difference: (\S+)$", text,
                      flags=re.MULTILINE)
    names = [r[0] for r in rows]
    for name in ("logits", "h", "W2", "b2", "hpreact", "bngain", "bnbias", "bnraw", "hprebn", "embcat", "W1", "b1",
                 "emb", "C"):
        assert name in names, name
    assert all(close == "True" and float(diff) < 1e-14 for _, _, close, diff in rows)
    assert ("hpreact", "True", "True", "0.0e+00") in rows
    assert "largest difference from nn.BatchNorm1d" in text and "allclose: True  largest difference" in text


def test_attention_notebook_prints_the_chapters_numbers():
    text = all_text(executed("2_attention_by_hand"))
    for expected in ("queries  (1.000, 0.000), (1.000, 1.000), (2.000, 1.000)",
                     "token 3, scaled: (1.414, 0.707, 2.121)",
                     "e^s = (4.113, 2.028, 8.342)  sum = 14.484",
                     "weights = (0.284, 0.140, 0.576)",
                     "= (0.860, 1.432)",
                     "token 1 (fund): weights (1.000, 0.000, 0.000), output (1.000, 0.000)",
                     "token 2 (pays): weights (0.500, 0.500, 0.000), output (0.500, 1.000)",
                     "gradcheck: True"):
        assert expected in text


def test_arithmetic_notebook_prints_the_exact_counts():
    """GPT-2 small summed by hand in models/arithmetic.py's docstring; Mixtral's totals as the config's
    docstring gives them; bge-small = 12 blocks of 1,774,464 + 30,522·384 + 512·384 + 768."""
    from models.arithmetic import count_active_params, count_params
    from models.config import GPTConfig
    known = {"GPT-2 small, count_params: 124,439,808": count_params(GPTConfig.gpt2_small()) == 124_439_808,
             "bge-small: 33,211,392 parameters": count_params(GPTConfig.bge_small()) == 33_211_392,
             "Mixtral 8x7B holds 46,702,792,704 parameters; one token uses 12,879,925,248":
                 (count_params(GPTConfig.mixtral_8x7b()), count_active_params(GPTConfig.mixtral_8x7b()))
                 == (46_702_792_704, 12_879_925_248),
             "GPT-2 small by hand: 124,439,808 parameters": True,
             "kv_cache_bytes: 4,294,967,296 = 4.3 GB": True}
    assert 12 * (2 * 384 * 2 + 4 * 384 * 384 + 4 * 384 + 2 * 384 * 1536 + 1536 + 384) + 30522 * 384 + 512 * 384 + 768 \
        == 33_211_392
    text = all_text(executed("5_model_arithmetic"))
    for line, agrees in known.items():
        assert agrees, f"models.arithmetic disagrees with {line!r}"
        assert line in text, line


def test_arithmetic_notebook_router_balances_only_with_the_loss():
    """The router cell is `volatile` (which expert collapses depends on float32 rounding, so on the BLAS),
    but its finding is not: with the balancing loss no expert is idle and each block's entropy is near
    the 3 bits of an even split; without it, each block's entropy is lower."""
    text = all_text(executed("5_model_arithmetic"))
    runs = re.split(r"aux_loss_coef = ", text)
    without = next(r for r in runs if r.startswith("0.0:"))
    with_loss = next(r for r in runs if r.startswith("0.05:"))
    entropy = lambda run: [float(v) for v in re.findall(r"entropy (\d\.\d+) bits", run)[:2]]
    idle = lambda run: [int(v) for v in re.findall(r"idle experts (\d+)", run)[:2]]
    assert idle(with_loss) == [0, 0] and min(entropy(with_loss)) > 2.8
    assert all(a < b for a, b in zip(entropy(without), entropy(with_loss)))


def test_training_notebook_loss_falls_below_the_baseline_and_leaves_a_checkpoint():
    text = all_text(executed("4_training_a_gpt"))
    val = [float(v) for v in re.findall(r"^step +\d+ \| train [\d.]+ \| val ([\d.]+)$", text, flags=re.MULTILINE)]
    baseline = float(re.search(r"unigram baseline: ([\d.]+) nats", text).group(1))
    assert len(val) >= 5, text
    assert abs(val[0] - math.log(512)) < 0.1                       # untrained: every token about equally likely
    assert all(b < a + 0.05 for a, b in zip(val, val[1:])), val    # falls at every measurement, give or take noise
    assert val[-1] < baseline - 1.0 and val[-1] < val[0] - 2.0, (val, baseline)
    assert "['ckpt.safetensors', 'config.json', 'tokenizer.json']" in text
    sys.path.insert(0, str(ROOT / "demos"))
    try:
        import sample
        model, tokenizer = sample.load_model(ROOT / "out" / "notebook_gpt")   # what the notebook wrote
    finally:
        sys.path.remove(str(ROOT / "demos"))
    # 512·64 + 64·64 embeddings + 2 blocks of (4·64² + 4·64 attention, 2·64·256 + 256 + 64 MLP, 4·64 norms) + 128
    assert model.num_params() == 136_960 and tokenizer.vocab_size == 512


def test_engine_notebook_gives_micrographs_numbers_and_embeds_the_backprop_page():
    """micrograd's neuron: o = tanh(2·(−3) + 0·1 + 6.8814) = 1/√2, do/dn = 1 − o² = 0.5, do/dw1 = 0.5·x1 = 1."""
    nb = executed("1_engine_by_hand")
    text = all_text(nb)
    for expected in ("n = 0.8814, o = tanh(n) = 0.7071", "do/dw1 = 1.0000", "do/dw2 = 0.0000", "do/db = 0.5000",
                     "neuron: True", "layer:  True", "GradcheckError: gradcheck: input 0",
                     "1. do/dx1 = -1.5000, do/dx2 = 0.5000", "2. dy/da = 6.0", "retain_graph=True"):
        assert expected in text, expected
    backward = [t for c in code_cells(nb) if "direction=\"backward\"" in _text(c["source"])
                for kind, t in outputs(c) if kind == "svg"]
    assert backward and "AccumulateGrad w1" in backward[0] and "‖g‖=1" in backward[0]   # drawn after a plain backward
    pages = [html.unescape(t) for c in code_cells(nb) for kind, t in outputs(c) if kind == "html"]
    assert len(pages) == 1 and "<iframe srcdoc=" in pages[0] and "step 1 / 8" in pages[0] and "<svg" in pages[0]


def test_block_notebook_rebuilds_the_block_and_draws_its_weights_in_their_boxes():
    nb = executed("3_a_block_opened")
    text = all_text(nb)
    difference = float(re.search(r"between our numpy block and nn.Block: (\S+)", text).group(1))
    assert difference < 1e-12
    assert "d = 768: by hand  7,087,872   nn.Block  7,087,872   models.arithmetic  7,087,872" in text
    assert "GPT-2 small: attention 2,359,296 + 3,072 biases, MLP 4,718,592 + 3,840 biases" in text
    svgs = [t for c in code_cells(nb) if "graph" in c["metadata"].get("tags", []) for kind, t in outputs(c)
            if kind == "svg"]
    fused, opened = svgs
    for svg in (fused, opened):  # the boxes (clusters come first in the SVG) and the parameters named like them;
        clusters = svg.split("\ndL/dL = 1")[0].split("\n")  # that each sits inside its box, tests/test_graph.py checks
        for box in ("attn.c_attn", "attn.c_proj", "mlp.c_fc", "mlp.c_proj", "ln_1", "ln_2"):
            assert box in clusters and f"AccumulateGrad {box}.weight" in svg, box
    assert "MultiHeadAttentionBackward (fused)" in opened and "MultiHeadAttentionBackward (fused)" not in fused
    assert "ExpBackward" in opened and "ExpBackward" not in fused


@pytest.mark.parametrize("which", ["stored", "fresh run"])
def test_inside_notebook_caches_bitwise_finds_the_induction_head_and_ablates_it(which):
    """The induction cells are `volatile` (when the head forms depends on float32 rounding, so on the BLAS
    and the kernels): their numbers are checked here, in the stored notebook and in a fresh run."""
    name = "7_inside_a_trained_model"
    text = all_text(stored(name) if which == "stored" else executed(name))
    assert "same logits as model(idx): True" in text and "last row = the model's logits: True" in text
    assert "resid_post = resid_pre + attn.out + mlp.out, largest difference: 0.0" in text
    scores = re.search(r"layer 1 +([\d.]+) ([\d.]+) +([\d.]+) ([\d.]+)", text).groups()
    assert max(map(float, scores[:2])) < 0.05 and max(map(float, scores[2:])) > 0.5   # chance, then a head
    intact, best, other = map(float, re.search(
        r"intact ([\d.]+) \| best head L1H\d zeroed ([\d.]+) \| L1H\d zeroed ([\d.]+)", text).groups())
    assert best > math.log(64) > 1.0 > intact and other - intact < 0.5

"""The engine reads in one sitting (issue 29): the five reading-order files hold at most 900 lines of code,
tensor.py is short and meets its first op early, autograd.py opens with the walk, and docs/engine.md's
line counts are the files' (counted by benchmarks/line_counts.py, independently of the files' own claims)."""
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import line_counts  # noqa: E402


def test_the_counter_counts_code_lines_only(tmp_path):
    source = tmp_path / "x.py"
    source.write_text('"""A docstring\nof two lines."""\n\n# a comment\nx = (1 +\n     2)  # a tail comment\n\n'
                      'def f():\n    """One line."""\n    return "not a docstring"\n')
    assert line_counts.code_lines(source) == 4     # x = (1 +, 2), def f():, return


def test_the_reading_order_is_at_most_900_lines_of_code():
    assert line_counts.figures()["reading order, code lines"] <= 900


def test_tensor_py_is_short_and_its_first_op_comes_early():
    path = ROOT / "tinygrad_like" / "tensor.py"
    assert len(path.read_text().splitlines()) <= 300
    tensor = next(n for n in ast.parse(path.read_text()).body if isinstance(n, ast.ClassDef) and n.name == "Tensor")
    first_op = min(f.lineno for f in tensor.body if isinstance(f, ast.FunctionDef)
                   and "ops." in ast.unparse(f) and not f.name.startswith("_") or
                   isinstance(f, ast.FunctionDef) and f.name.startswith("__") and "ops." in ast.unparse(f))
    assert first_op <= 120


def test_autograd_opens_with_the_walk_then_accumulation():
    tree = ast.parse((ROOT / "tinygrad_like" / "autograd.py").read_text())
    functions = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert functions[:3] == ["backprop", "accumulate", "into_leaf"]


def test_engine_md_quotes_the_counted_figures():
    figures = line_counts.figures()
    text = " ".join((ROOT / "docs" / "engine.md").read_text().split())
    assert f"The *teaching core* ({figures['core, lines']:,} lines" in text
    assert f"(`tinygrad_like/fast/`, {figures['fast, lines of Python']:,} lines of Python and " \
           f"{figures['fast, lines of C']:,} of C)" in text
    assert f"(`tinygrad_like/dialect/`, {figures['dialect, lines']:,} lines)" in text
    assert f"Five files hold the whole idea, {figures['reading order, code lines']:,} lines of code" in text


def test_the_model_file_is_the_model():
    """models/gpt.py reads config -> embeddings -> blocks -> head -> loss -> generate; the Hugging Face layouts
    and the interpretability tools live in models/hf_export.py and models/inside.py."""
    path = ROOT / "models" / "gpt.py"
    assert len(path.read_text().splitlines()) <= 260
    names = {n.name for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.FunctionDef)}
    assert {"forward", "generate", "_trunk"} <= names and "_trunk_layers" not in names


def test_one_attention_one_mask_one_head_split_one_kv_repeat():
    """nn/attention.py stays short: one call of the engine's multihead_attention (its head split, causal mask
    and softmax, none written here); the fast path's additive mask is made from the same causal_mask;
    nothing else repeats key/value heads by hand."""
    attention = (ROOT / "nn" / "attention.py").read_text()
    assert len(attention.splitlines()) <= 130
    assert attention.count("multihead_attention(") == 1 and "causal_mask(" not in attention
    assert "split_heads(" not in attention and ".softmax(" not in attention and "repeat_interleave(" not in attention
    for path in list((ROOT / "nn").rglob("*.py")) + list((ROOT / "models").rglob("*.py")) + \
            list((ROOT / "tinygrad_like").rglob("*.py")):
        text = path.read_text()
        if path.name != "composites.py":
            assert "np.tril(np.ones(" not in text, path                 # a causal mask of its own
        assert "def repeat_kv(x" not in text, path

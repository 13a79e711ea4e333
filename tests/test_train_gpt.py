"""Tests of the main job, demos/train_gpt.py, and demos/sample.py and demos/data.py.

Runs are in-process (main(argv)), with a one-layer model 16 wide on 16-token windows for a few
steps, so each takes a second or two. Known answers come from math or from plain numpy written
here, never from the code under test: the unigram baseline is recomputed with a Counter; resuming
is checked against an uninterrupted run (np.array_equal on every parameter and every optimizer
buffer, and the same loss history).
"""
import json
import math
import pathlib
import re
import sys
import xml.etree.ElementTree as ET
from collections import Counter

import matplotlib.image
import numpy as np
import pytest
import safetensors.numpy

DEMOS = pathlib.Path(__file__).resolve().parents[1] / "demos"
if str(DEMOS) not in sys.path:
    sys.path.append(str(DEMOS))  # the demos import their helper module `_common` as scripts do

import data  # noqa: E402
import sample  # noqa: E402
import train_gpt  # noqa: E402

SVG = "{http://www.w3.org/2000/svg}"
TINY = ["--preset", "tiny", "--tokenizer", "char", "--n-layer", "1", "--n-head", "2", "--n-embd", "16",
        "--block-size", "16", "--batch-size", "4", "--eval-iters", "2", "--sample-tokens", "12", "--prompt", "The "]
SUMMARY_KEYS = ("config", "num_params", "steps", "train_loss", "val_loss", "unigram_val_loss",
                "tokens_per_sec", "wall_time_s", "checkpoint")


def run(out, *flags, steps=6, eval_interval=3):
    return train_gpt.main([*TINY, "--steps", str(steps), "--eval-interval", str(eval_interval),
                           "--out", str(out), *flags])


def interrupt_at_call(monkeypatch, n):
    """Make the n-th forward_backward call (1-based) raise KeyboardInterrupt, as Ctrl-C would."""
    real, calls = train_gpt.forward_backward, [0]

    def fake(*args):
        calls[0] += 1
        if calls[0] == n:
            raise KeyboardInterrupt
        return real(*args)
    monkeypatch.setattr(train_gpt, "forward_backward", fake)


def checkpoint_arrays(path):
    return safetensors.numpy.load_file(str(path))


def checkpoint_meta(path):
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        return json.loads(f.read(n))["__metadata__"]


# ---------------------------------------------------------------- the output folder

@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("train_gpt")
    return out, run(out)


def test_every_output_file_is_written_and_readable(tiny_run):
    out, summary = tiny_run
    for name in ("ckpt.safetensors", "config.json", "tokenizer.json", "samples.txt", "loss.png",
                 "attention.png", "block_backward.svg", "summary.json"):
        assert (out / name).is_file(), name
    for png in ("loss.png", "attention.png"):
        image = matplotlib.image.imread(out / png)  # decodes, or raises
        assert image.ndim == 3 and min(image.shape[:2]) > 100
    assert "=== prompt 'The ' ===\nThe " in (out / "samples.txt").read_text(encoding="utf-8")


def test_attention_maps_have_a_colour_bar_and_name_their_axes(tiny_run):
    """Each heatmap's rows are queries and columns keys: the bottom row of panels says key, the left column
    query, and one colour bar gives the weight's scale (0 to 1) for all of them."""
    import training_run
    out, _ = tiny_run
    model, tok = sample.load_model(out)
    ids = np.array(tok.encode("The cat sat."))
    fig = training_run.attention_figure(model, tok, ids)
    try:
        panels = [ax for ax in fig.axes if ax.get_title().startswith("layer ")]
        bars = [ax for ax in fig.axes if ax not in panels]
        assert len(panels) == model.config.n_layer * model.config.n_head and len(bars) == 1
        assert bars[0].get_ylabel() == "attention weight (each row sums to 1)"
        assert tuple(bars[0].get_ylim()) == (0.0, 1.0)
        bottom = [ax for ax in panels if ax.get_title().startswith(f"layer {model.config.n_layer - 1} ")]
        left = [ax for ax in panels if ax.get_title().endswith(" head 0")]
        assert all(ax.get_xlabel() == "key (the token attended to)" for ax in bottom)
        assert all(ax.get_ylabel() == "query (the token attending)" for ax in left)
    finally:
        import matplotlib.pyplot as plt
        plt.close(fig)


def test_block_backward_svg_is_grouped_by_sub_layer(tiny_run):
    out, _ = tiny_run
    root = ET.parse(out / "block_backward.svg").getroot()
    clusters = {g.find(f"{SVG}title").text for g in root.iter(f"{SVG}g") if g.get("class") == "cluster"}
    for sub_layer in ("ln_1", "attn", "ln_2", "mlp"):
        assert f"cluster_transformer.h.0.{sub_layer}" in clusters
    texts = " ".join(t.text or "" for t in root.iter(f"{SVG}text"))
    assert "AccumulateGrad transformer.h.0.attn.c_attn.weight" in texts  # weights sit in their boxes
    assert "cluster_transformer.h.0.attn.c_attn" in clusters  # (tests/test_graph.py checks who sits where)
    # one node per op by default: the block's story fits a screen (the main job's: 1436 x 1341 pt, was 1529 x 2832)
    assert "MultiHeadAttentionBackward" in texts and "(fused)" not in texts and "ReshapeBackward" not in texts
    width, height = (float(root.get(k).removesuffix("pt")) for k in ("width", "height"))
    assert width <= 1500 and height <= 1400, (width, height)


def test_full_graph_opens_every_fused_op(tmp_path):
    run(tmp_path, "--full-graph", steps=2, eval_interval=2)
    root = ET.parse(tmp_path / "block_backward.svg").getroot()
    texts = " ".join(t.text or "" for t in root.iter(f"{SVG}text"))
    assert "MultiHeadAttentionBackward (fused)" in texts and "ExpBackward" in texts  # the attention, opened
    assert "LayerNormBackward (fused)" in texts and "ReshapeBackward" in texts


def test_summary_has_every_key_with_finite_losses(tiny_run):
    out, summary = tiny_run
    on_disk = json.loads((out / "summary.json").read_text())
    assert on_disk == json.loads(json.dumps(summary))
    for key in SUMMARY_KEYS:
        assert key in on_disk, key
    for key in ("train_loss", "val_loss", "unigram_val_loss", "tokens_per_sec", "wall_time_s"):
        assert math.isfinite(on_disk[key]) and on_disk[key] > 0, key
    assert on_disk["steps"] == 6 and on_disk["config"]["n_embd"] == 16
    # the summary's model is the checkpoint's model
    n = sum(a.size for k, a in checkpoint_arrays(out / "ckpt.safetensors").items() if not k.startswith("optim."))
    assert on_disk["num_params"] == n


def test_plain_log_lines_when_stdout_is_not_a_terminal(tmp_path, capsys):
    summary = run(tmp_path, "--log-interval", "2")   # evaluated at steps 0, 3 and 6
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("step ")]
    pattern = re.compile(r"step (\d+)/6 \| loss \d+\.\d{4}( \| val (\d+\.\d{4}))? \| tok/s \d+ \| eta \d+:\d\d")
    assert all(pattern.fullmatch(line) for line in lines), lines
    matches = [pattern.fullmatch(line) for line in lines]
    assert [int(m[1]) for m in matches] == [2, 3, 4, 6]  # every 2, and evals
    # val only where it was measured, never carried over to the lines between evaluations
    assert [int(m[1]) for m in matches if m[2]] == [3, 6]
    history = json.loads(checkpoint_meta(tmp_path / "ckpt.safetensors")["extra"])["history"]
    measured = {step: round(val, 4) for step, _, val in history["eval"]}
    assert {int(m[1]): float(m[3]) for m in matches if m[2]} == {3: measured[3], 6: measured[6]}
    assert measured[6] == round(summary["val_loss"], 4)
    assert "\r" not in "".join(lines)


def test_progress_bar_on_a_terminal(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    run(tmp_path)
    out = capsys.readouterr().out
    assert "\r" in out and "6/6" in out and "tok/s" in out and "val " in out  # tqdm redraws one line
    assert not re.search(r"^step \d+/6 \|", out, flags=re.MULTILINE)


# ---------------------------------------------------------------- stopping and resuming

def test_resume_gives_the_same_numbers_as_one_run(tmp_path, monkeypatch):
    flags = ["--dropout", "0.1"]  # dropout draws from the library RNG too: the checkpoint must restore it
    straight = run(tmp_path / "straight", *flags, steps=8, eval_interval=2)
    interrupt_at_call(monkeypatch, 4 + 1)  # 4 steps complete, the 5th is cut off mid-step
    assert run(tmp_path / "split", *flags, steps=8, eval_interval=2) is None
    assert json.loads(checkpoint_meta(tmp_path / "split" / "ckpt.safetensors")["step"]) == 4
    monkeypatch.undo()  # Ctrl-C is over: resume with the real step
    resumed = train_gpt.main(["--resume", str(tmp_path / "split")])

    a = checkpoint_arrays(tmp_path / "straight" / "ckpt.safetensors")
    b = checkpoint_arrays(tmp_path / "split" / "ckpt.safetensors")
    assert sorted(a) == sorted(b) and any(k.startswith("optim.") for k in a)
    for key in a:
        assert np.array_equal(a[key], b[key]), key  # weights and AdamW moments, bit for bit
    ha = json.loads(checkpoint_meta(tmp_path / "straight" / "ckpt.safetensors")["extra"])["history"]
    hb = json.loads(checkpoint_meta(tmp_path / "split" / "ckpt.safetensors")["extra"])["history"]
    assert ha == hb and len(ha["train"]) == 8 and [e[0] for e in ha["eval"]] == [0, 2, 4, 6, 8]
    assert resumed["val_loss"] == straight["val_loss"] and resumed["steps"] == 8


def test_ctrl_c_saves_a_checkpoint_and_says_how_to_resume(tmp_path, monkeypatch, capsys):
    interrupt_at_call(monkeypatch, 3)
    assert run(tmp_path) is None
    meta = checkpoint_meta(tmp_path / "ckpt.safetensors")
    assert json.loads(meta["step"]) == 2
    assert len(json.loads(meta["extra"])["history"]["train"]) == 2
    assert f"--resume {tmp_path}" in capsys.readouterr().out
    assert not (tmp_path / "summary.json").exists()


def test_prompt_the_tokenizer_cannot_encode_fails_before_training(tmp_path, capsys):
    (tmp_path / "t.txt").write_text("abc " * 100, encoding="utf-8")
    with pytest.raises(SystemExit) as e:
        run(tmp_path / "out", "--text", str(tmp_path / "t.txt"))
    assert e.value.code == 2 and "'T' is not in the vocabulary" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_threads_are_checked_and_given_back(tmp_path, capsys):
    """--threads sets the engine's pool for the run only (the run's numbers do not depend on it); 0 is refused."""
    import tinygrad_like
    with pytest.raises(SystemExit) as e:
        run(tmp_path / "zero", "--threads", "0")
    assert e.value.code == 2 and "--threads must be at least 1" in capsys.readouterr().err
    before = tinygrad_like.get_num_threads()
    one, two = (run(tmp_path / str(n), "--threads", str(n)) for n in (1, 2))
    assert tinygrad_like.get_num_threads() == before
    assert one["val_loss"] == two["val_loss"] and one["train_loss"] == two["train_loss"]


def test_ctrl_c_during_an_update_waits_for_the_update_to_finish():
    import os
    import signal
    finished = False
    with pytest.raises(KeyboardInterrupt):
        with train_gpt.hold_interrupt():
            os.kill(os.getpid(), signal.SIGINT)  # delivered now, held until the block ends
            finished = True
    assert finished and signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_resume_refuses_to_change_the_model(tmp_path, monkeypatch, capsys):
    interrupt_at_call(monkeypatch, 2)
    run(tmp_path)
    with pytest.raises(SystemExit) as e:
        train_gpt.main(["--resume", str(tmp_path), "--n-layer", "3"])
    assert e.value.code == 2 and "cannot change ['n_layer']" in capsys.readouterr().err


# ---------------------------------------------------------------- data and the unigram baseline

UNIGRAM_CASES = [
    # train ids, val ids, vocab size: p(v) = (count + 1) / (N + V), loss = mean of -log p over val
    ([0, 0, 1], [0, 2], 3, -(math.log(3 / 6) + math.log(1 / 6)) / 2),
    ([1, 1, 1, 1], [1], 2, -math.log(5 / 6)),
    ([0, 1, 2, 3], [3, 2, 1, 0], 4, math.log(4)),  # uniform counts: log V
]


@pytest.mark.parametrize("train_ids, val_ids, vocab, expected", UNIGRAM_CASES)
def test_unigram_loss_by_hand(train_ids, val_ids, vocab, expected):
    assert data.unigram_loss(np.array(train_ids), np.array(val_ids), vocab) == pytest.approx(expected, rel=1e-12)


def test_unigram_baseline_of_a_run_matches_plain_counting(tmp_path):
    text = "The cat sat on the mat. " * 40 + "A dog! " * 30
    (tmp_path / "t.txt").write_text(text, encoding="utf-8")
    summary = run(tmp_path / "out", "--text", str(tmp_path / "t.txt"), steps=2, eval_interval=2)
    cut = int(len(text) * 0.9)
    train, val, vocab = text[:cut], text[cut:], sorted(set(text))
    counts = Counter(train)
    expected = -np.mean([math.log((counts[c] + 1) / (len(train) + len(vocab))) for c in val])
    assert summary["unigram_val_loss"] == pytest.approx(expected, rel=1e-12)
    assert summary["text"] == str(tmp_path / "t.txt") and summary["config"]["vocab_size"] == len(vocab)


def test_batches_are_windows_and_their_shift():
    ids = np.arange(100) * 7
    x, y = data.get_batch(ids, 5, 8, np.random.default_rng(0))
    assert x.shape == y.shape == (5, 8)
    assert np.array_equal(y[:, :-1], x[:, 1:]) and np.array_equal(y[:, -1], x[:, -1] + 7)
    assert np.all(np.diff(x, axis=1) == 7)  # consecutive tokens of the stream
    with pytest.raises(ValueError, match="block_size"):
        data.get_batch(ids[:8], 1, 8, np.random.default_rng(0))


def test_bpe_on_a_text_file(tmp_path):
    (tmp_path / "code.txt").write_text(data.default_text()[:20000], encoding="utf-8")
    summary = run(tmp_path / "out", "--text", str(tmp_path / "code.txt"), "--tokenizer", "bpe",
                  "--vocab-size", "300", steps=3, eval_interval=3)
    assert summary["config"]["vocab_size"] == 300
    assert json.loads((tmp_path / "out" / "tokenizer.json").read_text())["type"] == "bpe"
    assert math.isfinite(summary["val_loss"])


def test_torch_yardstick_without_torch_says_how_to_install_it(monkeypatch, capsys):
    import importlib.util
    spec = importlib.util.spec_from_file_location("train_gpt_torch", DEMOS.parent / "benchmarks" / "train_gpt_torch.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` now raises ImportError
    assert bench.main([]) is None
    assert "pip install torch==2.13.0" in capsys.readouterr().out


def test_torch_yardstick_says_who_took_how_long(capsys):
    import importlib.util
    spec = importlib.util.spec_from_file_location("train_gpt_torch", DEMOS.parent / "benchmarks" / "train_gpt_torch.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    ours = dict(wall_time_s=108.04, train_time_s=90.0, tokens_per_sec=1.0, train_loss=2.5, val_loss=3.5,
                unigram_val_loss=5.9, steps=800)
    theirs = dict(wall_time_s=113.7, train_time_s=60.0, tokens_per_sec=1.5, train_loss=2.5, val_loss=3.5)
    bench.compare(theirs, ours)
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-2:] == ["tinygrad_like took 0.95 of PyTorch's wall time (108.0 s against 113.7 s)",
                          "tinygrad_like took 1.50 of PyTorch's time in training steps (90.0 s against 60.0 s)"]
    assert "faster" not in " ".join(lines)


# ---------------------------------------------------------------- sample.py

def test_sample_generates_from_a_checkpoint(tiny_run, capsys):
    out, _ = tiny_run
    a = sample.main([str(out), "--prompt", "The ", "--max-new-tokens", "20", "--seed", "3"])
    b = sample.main([str(out / "ckpt.safetensors"), "--prompt", "The ", "--max-new-tokens", "20",
                     "--seed", "3", "--top-k", "5", "--top-p", "0.9", "--temperature", "0.7"])
    c = sample.main([str(out), "--prompt", "The ", "--max-new-tokens", "20", "--seed", "3"])
    assert a[0].startswith("The ") and len(a[0]) == 4 + 20  # char tokenizer: one character per token
    assert a == c  # same seed, same text
    assert b[0].startswith("The ") and "The " in capsys.readouterr().out


# ---------------------------------------------------------------- mistakes on the command line

NOT_UTF8 = b"caf\xe9 au lait\n" * 50  # Latin-1: \xe9 starts a 2-byte UTF-8 sequence that "\x20" cannot continue


def mistake(tmp_path, monkeypatch, capsys, *flags, main=None) -> str:
    """Run with a mistake: exit status 2, one line on stderr naming it, nothing trained or written."""
    def no_training(*args):
        raise AssertionError("training started")
    monkeypatch.setattr(train_gpt, "train", no_training)
    monkeypatch.setattr(train_gpt, "GPT", no_training)  # not even the model is built
    with pytest.raises(SystemExit) as e:
        (main or train_gpt.main)([*flags, "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert e.value.code == 2, err
    assert err.startswith("python demos/train_gpt.py: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err and not (tmp_path / "out").exists()
    return err


def test_missing_text_file(tmp_path, monkeypatch, capsys):
    err = mistake(tmp_path, monkeypatch, capsys, "--text", str(tmp_path / "nope.txt"))
    assert f"--text: no such file '{tmp_path / 'nope.txt'}'" in err


@pytest.mark.parametrize("content", ["", " \n\n\t"])
def test_empty_text_file(tmp_path, monkeypatch, capsys, content):
    (tmp_path / "empty.txt").write_text(content, encoding="utf-8")
    assert "is empty" in mistake(tmp_path, monkeypatch, capsys, "--text", str(tmp_path / "empty.txt"))


def test_dev_null_is_empty_not_missing(tmp_path, monkeypatch, capsys):
    import os
    err = mistake(tmp_path, monkeypatch, capsys, "--text", os.devnull)
    assert f"--text: '{os.devnull}' is empty" in err and "no such file" not in err


def test_folder_as_text(tmp_path, monkeypatch, capsys):
    assert "is a folder" in mistake(tmp_path, monkeypatch, capsys, "--text", str(tmp_path))


def test_text_that_is_not_utf8(tmp_path, monkeypatch, capsys):
    (tmp_path / "latin1.txt").write_bytes(NOT_UTF8)
    err = mistake(tmp_path, monkeypatch, capsys, "--text", str(tmp_path / "latin1.txt"))
    assert "is not UTF-8 text" in err and "0xe9" in err


def test_n_head_must_divide_n_embd(tmp_path, monkeypatch, capsys):
    err = mistake(tmp_path, monkeypatch, capsys, "--n-head", "3")  # small preset: n_embd 128
    assert "--n-head (3) must divide --n-embd (128)" in err


def test_other_model_settings_name_their_flags(tmp_path, monkeypatch, capsys):
    assert "--top-k=3 is larger than --n-expert=2" in mistake(tmp_path, monkeypatch, capsys,
                                                              "--n-expert", "2", "--top-k", "3")


def test_bpe_vocab_below_256(tmp_path, monkeypatch, capsys):
    assert "--vocab-size must be at least 256" in mistake(tmp_path, monkeypatch, capsys, "--vocab-size", "255")


def test_block_size_longer_than_the_text_fails_at_once(tmp_path, monkeypatch, capsys):
    """The default text's validation split has ~46,600 bytes, so ~16,000 BPE tokens: 100,000 is known
    too long before the tokenizer is trained (it used to hang building a 100,000² attention mask)."""
    def no_bpe(*args):
        raise AssertionError("the tokenizer was trained first")
    monkeypatch.setattr(train_gpt, "build_tokenizer", no_bpe)
    err = mistake(tmp_path, monkeypatch, capsys, "--block-size", "100000")
    assert "--block-size 100000 is too long for the text: a window needs 100001 tokens" in err
    assert "validation split" in err


def test_block_size_longer_than_the_validation_tokens(tmp_path, monkeypatch, capsys):
    """100 characters: the validation split is the last 10, so 10 char tokens; a window of 16 + 1
    does not fit (it used to fail with a traceback once training had started)."""
    (tmp_path / "t.txt").write_text("abcdefghij" * 10, encoding="utf-8")
    err = mistake(tmp_path, monkeypatch, capsys, *TINY, "--text", str(tmp_path / "t.txt"))
    assert "a window needs 17 tokens and the validation split (the last 10% of the text) has at most 10" in err


def test_explicit_warmup_not_below_steps(tmp_path, monkeypatch, capsys):
    err = mistake(tmp_path, monkeypatch, capsys, "--steps", "5", "--warmup", "5")
    assert "--warmup (5) must be smaller than --steps (5)" in err


def test_argparse_mistakes_are_one_line_too(tmp_path, monkeypatch, capsys):
    assert "argument --steps: invalid int value: 'ten'" in mistake(tmp_path, monkeypatch, capsys, "--steps", "ten")


def test_one_step_runs_with_the_default_warmup(tmp_path):
    summary = run(tmp_path, steps=1, eval_interval=1)
    assert summary["steps"] == 1 and summary["settings"]["warmup"] == 0 and math.isfinite(summary["val_loss"])


@pytest.mark.parametrize("steps, warmup", [(800, 40), (100, 5), (20, 1), (2, 1), (1, 0)])
def test_default_warmup_is_a_twentieth_and_fits_any_run(steps, warmup):
    args = train_gpt.build_parser().parse_args(["--steps", str(steps)])
    assert train_gpt.resolve_settings(args)[0]["warmup"] == warmup  # 800: the default run's 40, unchanged


def help_entries(text: str) -> dict[str, str]:
    """Option -> its help, from a --help text (entries start with '  -', continuation lines are indented more)."""
    entries = re.split(r"\n(?=  -)", text.split("options:", 1)[1])
    return {entry.split()[0].rstrip(","): " ".join(entry.split()) for entry in entries[1:]}


def test_help_shows_each_default_once():
    entries = help_entries(train_gpt.build_parser().format_help())
    assert "None" not in " ".join(entries.values())
    for text in entries.values():
        assert text.count("default") <= 1, text
    for option, expected in [("--vocab-size", "(default: 1024)"), ("--seed", "(default: 1337)"),
                             ("--n-embd", "(default from --preset: tiny 32, small 128, medium 192)"),
                             ("--warmup", "(default: steps / 20, at most steps - 1)")]:
        assert expected in entries[option], entries[option]


def test_sample_mistakes_are_one_line(tmp_path, capsys):
    for argv, message in [([str(tmp_path)], "ckpt.safetensors is missing"),
                          ([str(tmp_path), "--top-p", "1.5"], "--top-p must be in (0, 1], got 1.5")]:
        with pytest.raises(SystemExit) as e:
            sample.main(argv)
        err = capsys.readouterr().err
        assert e.value.code == 2 and err.startswith("python demos/sample.py: error: ") and message in err
        assert err.count("\n") == 1

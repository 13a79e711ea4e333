"""demos/export_hf.py and demos/continue_in_torch.py on a tiny train_gpt.py run (a char tokenizer,
one layer, a few steps, in-process).

The known answers: the model card's command, parsed by train_gpt.py's own parser, gives the run's
settings back; PyTorch, measuring on the batches train_gpt.py evaluated on, repeats the run's last
train and validation losses (the same model and tokens, computed by another framework).
"""
import json
import pathlib
import shlex
import sys

import pytest

DEMOS = pathlib.Path(__file__).resolve().parents[1] / "demos"
if str(DEMOS) not in sys.path:
    sys.path.append(str(DEMOS))

import continue_in_torch  # noqa: E402
import export_hf  # noqa: E402
import train_gpt  # noqa: E402

TINY = ["--preset", "tiny", "--tokenizer", "char", "--n-layer", "1", "--n-head", "2", "--n-embd", "16",
        "--block-size", "16", "--batch-size", "4", "--eval-iters", "2", "--sample-tokens", "12", "--prompt", "The ",
        "--steps", "6", "--eval-interval", "3"]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("train_gpt")
    summary = train_gpt.main([*TINY, "--out", str(out)])
    return out, summary


def test_export_writes_model_tokenizer_and_card(run, capsys):
    out, summary = run
    hf = export_hf.main([str(out)])
    assert hf == out / "hf"
    assert sorted(p.name for p in hf.iterdir()) == ["README.md", "config.json", "generation_config.json",
                                                     "model.safetensors", "tokenizer.json", "tokenizer_config.json"]
    assert json.loads((hf / "config.json").read_text())["architectures"] == ["GPT2LMHeadModel"]
    card = (hf / "README.md").read_text()
    assert f"validation loss **{summary['val_loss']:.4f}**" in card and "pydoc_data.topics" in card
    command = next(line for line in card.splitlines() if line.startswith("python demos/train_gpt.py"))
    args = shlex.split(command)[2:]
    settings = json.loads((out / "config.json").read_text())["settings"]
    assert train_gpt.resolve_settings(train_gpt.build_parser().parse_args(args))[0] == settings
    with pytest.raises(SystemExit) as refused:
        export_hf.main([str(out)])                                       # not over an existing export
    assert refused.value.code == 2 and "pass overwrite=True" in capsys.readouterr().err
    export_hf.main([str(out), "--overwrite"])


def test_export_refuses_a_post_norm_run(tmp_path, capsys):
    train_gpt.main([*TINY, "--steps", "2", "--postnorm", "--out", str(tmp_path)])
    with pytest.raises(SystemExit) as refused:
        export_hf.main([str(tmp_path)])
    assert refused.value.code == 2 and "prenorm=False" in capsys.readouterr().err
    assert not (tmp_path / "hf").exists()


def test_continue_in_torch_starts_from_our_losses(run, capsys):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    out, summary = run
    if not (out / "hf").exists():
        export_hf.main([str(out)])
    result = continue_in_torch.main([str(out), "--steps", "3"])
    assert result["before"]["train"] == pytest.approx(summary["train_loss"], rel=1e-5)
    assert result["before"]["val"] == pytest.approx(summary["val_loss"], rel=1e-5)
    assert result["after"]["train"] < result["before"]["train"]          # 3 steps at the final lr still learn
    assert "AdamW step   3" in capsys.readouterr().out


def test_continue_in_torch_without_torch_prints_the_install(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "torch", None)                     # import torch now fails
    assert continue_in_torch.main([str(tmp_path)]) is None
    assert 'pip install -e ".[interop]"' in capsys.readouterr().out

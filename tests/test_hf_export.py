"""Export to Hugging Face: GPT.save_pretrained, from_pretrained of all three layouts, tokenizer.json.

The reference is transformers itself (GPT2LMHeadModel, LlamaForCausalLM, MixtralForCausalLM and the
`tokenizers` library, an independent implementation in PyTorch and Rust): its logits, greedy tokens
and token ids must equal ours. Tests that need torch / transformers / tokenizers skip without them
(pip install -e ".[interop]"); the refusals and the Python side of the tokenizer need none of them.
No network: every model and tokenizer is made in the test.
"""
import json
import re
import unicodedata

import numpy as np
import pytest

from models import hf_export
from models.gpt import GPT, GPTConfig
from models.tokenizer import SPLIT_PATTERN, BPETokenizer, CharTokenizer, spelled_pattern

BASE = dict(vocab_size=61, block_size=24, n_layer=2, n_head=4, n_embd=32)
LLAMA = dict(pos="rope", norm="rmsnorm", mlp="swiglu", bias=False)
FAMILIES = {  # name: (GPTConfig overrides, transformers class)
    "gpt2": (dict(), "GPT2LMHeadModel"),
    "gpt2-untied-nobias-relu": (dict(bias=False, tie_weights=False, mlp="relu", mlp_hidden=40), "GPT2LMHeadModel"),
    "llama-gqa-untied": (dict(LLAMA, n_kv_head=2, tie_weights=False), "LlamaForCausalLM"),
    "llama-bias-tied": (dict(LLAMA, bias=True, mlp_hidden=48), "LlamaForCausalLM"),
    "mixtral": (dict(LLAMA, n_kv_head=2, n_expert=4, top_k=2, tie_weights=False), "MixtralForCausalLM"),
}
# max |ours - theirs| / max |ours|. transformers computes RMSNorm, the RoPE table and the router
# softmax in float32 even for a float64 model, so Llama and Mixtral stay at 1e-5 in float64.
TOL = {("gpt2", "float32"): 1e-5, ("gpt2", "float64"): 1e-10, ("llama", "float32"): 1e-5,
       ("llama", "float64"): 1e-5, ("mixtral", "float32"): 1e-5, ("mixtral", "float64"): 1e-5}
HARD = ["héllo wörld, ça va? naïve café", "日本語のテキスト 中文 한국어", "emoji 🙂👍🏽 and 🇫🇷🇯🇵 flags",
        "family 👨\u200d👩\u200d👧\u200d👦 zwj a\u200db", "e\u0301 a\u0308\u0323 n\u0303 \u0301alone",
        "\u2764\ufe0f \u263a\ufe0e \u8fbb\U000e0100 vs", "x²+y³=z⁴ ½ ¾ ⅓ ① ²³ ⁰", "١٢٣ ٤ Ⅻ ⅷ 𝟘𝟙",
        "ctl\x00\x01\x07\x1b\x1c\x1d\x1e\x1f\x7f\x85\xa0\u2028\u2029\u3000 end", "tabs\tand\r\nnewlines\n\n  \r\r\n\n",
        " " * 50 + "a" + "\t" * 20 + "b" + "\n" * 9 + " ", "   leading spaces", "it's I'LL 'd 42 3.14 _x_ __init__",
        "x" * 300, "1234567890", ""]


def make_model(overrides, dtype="float32", seed=0):
    """A GPT with every parameter moved off its init (norm weights off 1, biases off 0), in eval mode."""
    model = GPT(GPTConfig(**BASE, **overrides, dtype=dtype))
    rng = np.random.default_rng(seed)
    for _, p in model.named_parameters():
        p.data[...] += rng.normal(0, 0.1, p.numpy().shape).astype(p.numpy().dtype)
    model.eval()
    return model


def load_hf(directory, dtype):
    """transformers' own class for the directory (AutoModelForCausalLM reads config.json's model_type).
    Mixtral in float64: transformers' default grouped_mm expert kernel takes no float64, so eager."""
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("torch")
    transformers.logging.set_verbosity_error()
    extra = {"experts_implementation": "eager"} if dtype == "float64" else {}
    if json.loads((directory / "config.json").read_text())["model_type"] != "mixtral":
        extra = {}
    return transformers.AutoModelForCausalLM.from_pretrained(directory, **extra).eval()


def torch_logits(hf, ids):
    import torch
    with torch.no_grad():
        return hf(torch.tensor(ids)).logits.numpy()


# ---------------------------------------------------------------- the three families

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", FAMILIES)
def test_logits_greedy_tokens_and_round_trip(name, dtype, tmp_path):
    overrides, cls = FAMILIES[name]
    model = make_model(overrides, dtype)
    model.save_pretrained(tmp_path / "m")
    hf = load_hf(tmp_path / "m", dtype)
    assert type(hf).__name__ == cls and str(hf.dtype) == f"torch.{dtype}"

    ids = np.random.default_rng(1).integers(0, BASE["vocab_size"], (3, BASE["block_size"]))
    ours, theirs = model(ids)[0].numpy(), torch_logits(hf, ids)
    rel = np.abs(ours - theirs).max() / np.abs(ours).max()
    assert rel < TOL[cls_family(cls), dtype], f"{name} {dtype}: max relative logit difference {rel:.3g}"

    import torch
    prompt = ids[:, :5]
    mine = model.generate(prompt, 12, temperature=0)
    out = hf.generate(torch.tensor(prompt), max_new_tokens=12, do_sample=False,
                      attention_mask=torch.ones(prompt.shape, dtype=torch.long))
    np.testing.assert_array_equal(out.numpy(), mine)

    back = GPT.from_pretrained(tmp_path / "m")
    assert back.config == model.config
    assert back.state_dict().keys() == model.state_dict().keys()
    for key, value in model.state_dict().items():
        assert back.state_dict()[key].dtype == value.dtype
        np.testing.assert_array_equal(back.state_dict()[key], value, err_msg=key)


def cls_family(cls):
    return hf_export.MODEL_TYPES[cls]


def test_config_spells_out_our_numbers(tmp_path):
    """Mixtral's defaults (rms_norm_eps 1e-5, theta 1e6, no head_dim) are not ours: the file says ours."""
    model = make_model(FAMILIES["mixtral"][0], "float64")
    model.save_pretrained(tmp_path / "m")
    cfg = json.loads((tmp_path / "m" / "config.json").read_text())
    assert cfg["rms_norm_eps"] == 1e-6 and cfg["rope_parameters"] == {"rope_type": "default", "rope_theta": 10000.0}
    assert cfg["tie_word_embeddings"] is False and cfg["intermediate_size"] == 4 * 32 and cfg["head_dim"] == 8
    assert cfg["num_key_value_heads"] == 2 and cfg["num_local_experts"] == 4 and cfg["num_experts_per_tok"] == 2
    assert cfg["dtype"] == "float64" and cfg["architectures"] == ["MixtralForCausalLM"]
    gen = json.loads((tmp_path / "m" / "generation_config.json").read_text())
    assert gen["do_sample"] is False and gen["eos_token_id"] is None


# ---------------------------------------------------------------- models made in transformers

def test_from_pretrained_reads_models_made_in_transformers(tmp_path):
    transformers = pytest.importorskip("transformers")
    torch = pytest.importorskip("torch")
    transformers.logging.set_verbosity_error()
    torch.manual_seed(0)
    small = dict(vocab_size=53, hidden_size=24, intermediate_size=40, num_hidden_layers=2, num_attention_heads=6,
                 num_key_value_heads=3, max_position_embeddings=20, rms_norm_eps=1e-6,
                 rope_parameters={"rope_type": "default", "rope_theta": 10000.0})
    made = {
        "llama": transformers.LlamaForCausalLM(transformers.LlamaConfig(**small, tie_word_embeddings=True)),
        "llama-bias": transformers.LlamaForCausalLM(transformers.LlamaConfig(**small, attention_bias=True,
                                                                              mlp_bias=True)),
        "mixtral": transformers.MixtralForCausalLM(transformers.MixtralConfig(**small, num_local_experts=3,
                                                                              num_experts_per_tok=2)),
        "gpt2": transformers.GPT2LMHeadModel(transformers.GPT2Config(vocab_size=53, n_embd=24, n_layer=2, n_head=6,
                                                                      n_positions=20, n_inner=40)),
    }
    ids = np.random.default_rng(0).integers(0, 53, (2, 20))
    for name, hf in made.items():
        with torch.no_grad():  # off the init: norm weights and biases must matter
            for p in hf.parameters():
                p.add_(torch.randn_like(p) * 0.1)
        hf.eval().save_pretrained(tmp_path / name)
        ours = GPT.from_pretrained(tmp_path / name)
        ours.eval()
        a, b = ours(ids)[0].numpy(), torch_logits(hf, ids)
        assert np.abs(a - b).max() / np.abs(a).max() < 1e-5, name


def test_from_pretrained_refuses_numbers_our_layers_lack(tmp_path):
    """transformers' Mixtral defaults: RMSNorm eps 1e-5 and RoPE theta 1e6 (ours: 1e-6, 1e4)."""
    cfg = {"architectures": ["MixtralForCausalLM"], "model_type": "mixtral", "vocab_size": 10, "hidden_size": 8,
           "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 16, "max_position_embeddings": 8,
           "num_local_experts": 2}
    (tmp_path / "model.safetensors").write_bytes(b"")
    for extra, field in [({}, "rms_norm_eps=1e-05"), ({"rms_norm_eps": 1e-6}, "rope_theta=1000000.0"),
                         ({"rms_norm_eps": 1e-6, "rope_parameters": {"rope_theta": 1e4}, "hidden_act": "gelu"},
                          "hidden_act='gelu'")]:
        (tmp_path / "config.json").write_text(json.dumps({**cfg, **extra}))
        with pytest.raises(ValueError, match=re.escape(field)):
            GPT.from_pretrained(tmp_path)


def test_from_pretrained_names_an_unsupported_architecture(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"architectures": ["BertForMaskedLM"], "model_type": "bert"}))
    (tmp_path / "model.safetensors").write_bytes(b"")
    with pytest.raises(ValueError, match="BertForMaskedLM"):
        GPT.from_pretrained(tmp_path)


# ---------------------------------------------------------------- refusals (no torch needed)

@pytest.mark.parametrize("overrides, field", [
    (dict(causal=False), "causal=False"),
    (dict(prenorm=False), "prenorm=False"),
    (dict(pos="rope", mlp="swiglu"), "norm='layernorm'"),               # RoPE with LayerNorm
    (dict(pos="rope", norm="rmsnorm", mlp="relu"), "mlp='relu'"),       # ReLU with RoPE
    (dict(pos="rope", norm="rmsnorm", mlp="gelu"), "mlp='gelu'"),
    (dict(mlp="swiglu"), "mlp='swiglu'"),                               # SwiGLU with learned positions
    (dict(norm="rmsnorm"), "norm='rmsnorm'"),
    (dict(n_kv_head=2), "n_kv_head=2"),
    (dict(n_expert=2), "n_expert=2"),
    (dict(LLAMA, dropout=0.1), "dropout=0.1"),
    (dict(LLAMA, bias=True, n_expert=2), "bias=True"),
])
def test_configs_without_a_counterpart_are_refused(overrides, field, tmp_path):
    model = GPT(GPTConfig(**BASE, **overrides))
    with pytest.raises(ValueError, match=re.escape(field)):
        model.save_pretrained(tmp_path / "m")
    assert list(tmp_path.iterdir()) == []                              # nothing written, not even a temp dir


def test_non_empty_directory_needs_overwrite(tmp_path):
    model = make_model({})
    target = tmp_path / "m"
    target.mkdir()
    (target / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="overwrite=True"):
        model.save_pretrained(target)
    assert [p.name for p in target.iterdir()] == ["notes.txt"]
    model.save_pretrained(target, overwrite=True)
    assert sorted(p.name for p in target.iterdir()) == ["config.json", "generation_config.json", "model.safetensors"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m"]          # no temp or old directory left


def test_failed_export_leaves_nothing_half_written(tmp_path, monkeypatch):
    import safetensors.numpy

    model = make_model({})
    model.save_pretrained(tmp_path / "old")
    before = (tmp_path / "old" / "model.safetensors").read_bytes()

    def broken(tensors, filename, metadata=None):
        open(filename, "wb").write(b"half")
        raise OSError("disk full")

    monkeypatch.setattr(safetensors.numpy, "save_file", broken)
    for target, overwrite in ((tmp_path / "new", False), (tmp_path / "old", True)):
        with pytest.raises(OSError, match="disk full"):
            make_model({}, seed=1).save_pretrained(target, overwrite=overwrite)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old"]        # no "new", no temp directory
    assert (tmp_path / "old" / "model.safetensors").read_bytes() == before


# ---------------------------------------------------------------- tokenizers

@pytest.fixture(scope="module")
def corpus():
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "demos"))
    from data import default_text
    return default_text()


@pytest.fixture(scope="module")
def bpe(corpus):
    return BPETokenizer.train(corpus[:int(0.9 * len(corpus))], 1024)   # the default run's tokenizer


def test_spelled_pattern_cuts_as_split_pattern(corpus):
    """The pattern that runs lists re's own classes, so Python's chunks are exactly SPLIT_PATTERN's:
    on the corpus, the hard strings and every code point (the default run's tokens do not change)."""
    spelled = spelled_pattern(SPLIT_PATTERN)
    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)
    rng = np.random.default_rng(0)
    mixed = "".join(every[i] + " \t\n\x1c"[j] for i, j in zip(rng.integers(0, len(every), 20000),
                                                             rng.integers(0, 4, 20000)))
    for text in [corpus, every, mixed, *HARD]:
        assert re.findall(spelled, text) == re.findall(SPLIT_PATTERN, text)
    assert "".join(re.findall(spelled, mixed)) == mixed               # every character is in some chunk


def test_tokenizers_engine_cuts_as_re_on_every_code_point():
    """Oniguruma (inside `tokenizers`) running the exported pattern cuts each code point as re does
    (between a letter and a digit, so a class difference shows); running SPLIT_PATTERN itself it would
    not (measured over all code points: 12,907 differ, e.g. ², ½, U+0301). Every BMP code point and the
    assigned non-private ones above it (the rest are unassigned: in no class of either engine)."""
    tokenizers = pytest.importorskip("tokenizers")
    points = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF
              and (c < 0x10000 or unicodedata.category(chr(c)) not in ("Cn", "Co"))]
    every = "".join("a" + chr(c) + "1 " for c in points)
    python = re.findall(SPLIT_PATTERN, every)
    cut = lambda pattern: [piece for piece, _ in tokenizers.pre_tokenizers.Split(
        tokenizers.Regex(pattern), "isolated").pre_tokenize_str(every)]
    assert cut(spelled_pattern(SPLIT_PATTERN)) == python
    assert cut(SPLIT_PATTERN) != python                                # why the classes are spelled out


def hf_tokenizers(tok, tmp_path):
    tokenizers = pytest.importorskip("tokenizers")
    transformers = pytest.importorskip("transformers")
    tok.save_hf(tmp_path)
    path = str(tmp_path / "tokenizer.json")
    return (tokenizers.Tokenizer.from_file(path), transformers.PreTrainedTokenizerFast(tokenizer_file=path),
            transformers.AutoTokenizer.from_pretrained(tmp_path))


def test_bpe_export_encodes_to_our_ids(bpe, corpus, tmp_path):
    rust, fast, auto = hf_tokenizers(bpe, tmp_path)
    for text in HARD + [corpus[:100_000]]:
        ours = bpe.encode(text)
        assert rust.encode(text).ids == ours, repr(text[:40])
        assert fast.encode(text) == fast(text)["input_ids"] == auto.encode(text) == ours, repr(text[:40])
        assert rust.decode(ours) == fast.decode(ours) == auto.decode(ours) == text, repr(text[:40])


def test_bpe_export_vocab_and_merges(bpe):
    data = bpe.to_hf_json()
    assert data["added_tokens"] == [] and data["post_processor"] is None
    vocab, merges = data["model"]["vocab"], data["model"]["merges"]
    assert len(vocab) == 1024 and sorted(vocab.values()) == list(range(1024)) and len(merges) == 768
    assert vocab["Ġ"] == 32 and vocab["!"] == 33 and vocab["Ā"] == 0               # GPT-2's byte table
    for r, (a, b) in enumerate(merges):                                             # merges in rank order
        assert vocab[a + b] == 256 + r


def test_bpe_export_refuses_two_ids_with_the_same_bytes():
    tok = BPETokenizer([(97, 97), (256, 97), (97, 256)])                # ids 257 and 258 are both "aaa"
    with pytest.raises(ValueError, match="257 and 258"):
        tok.to_hf_json()


def test_char_tokenizer_export(corpus, tmp_path):
    tok = CharTokenizer.from_text(corpus + "".join(HARD))
    rust, fast, auto = hf_tokenizers(tok, tmp_path)
    for text in HARD + [corpus[:100_000]]:
        ours = tok.encode(text)
        assert rust.encode(text).ids == fast.encode(text) == auto.encode(text) == ours
        assert rust.decode(ours) == fast.decode(ours) == text
    with pytest.raises(Exception, match="(?i)unk"):                      # unknown character: an error, as ours
        rust.encode("\U0001F600")


def test_save_pretrained_with_tokenizer(bpe, tmp_path):
    transformers = pytest.importorskip("transformers")
    model = GPT(GPTConfig(**{**BASE, "vocab_size": bpe.vocab_size}))
    model.save_pretrained(tmp_path / "m", tokenizer=bpe)
    auto = transformers.AutoTokenizer.from_pretrained(tmp_path / "m")
    assert auto.encode("def f(x):\n    return x²") == bpe.encode("def f(x):\n    return x²")
    assert json.loads((tmp_path / "m" / "tokenizer_config.json").read_text())["model_max_length"] == 24

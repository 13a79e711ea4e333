"""Hand a GPT over to Hugging Face transformers, and read transformers' models back, exactly.

    GPT.save_pretrained(directory)  ->  directory/config.json, model.safetensors, generation_config.json
    GPT.from_pretrained(directory)  <-  the same layout, written by us or by transformers

Three transformers classes compute what some of our configs compute, to the last rounding error:

    family   transformers class    our config
    gpt2     GPT2LMHeadModel       pos="learned", norm="layernorm", mlp="gelu" (tanh) or "relu", n_kv_head=n_head
    llama    LlamaForCausalLM      pos="rope", norm="rmsnorm", mlp="swiglu", n_expert=0 (GQA allowed)
    mixtral  MixtralForCausalLM    the llama shape with n_expert > 0 and bias=False

All three are pre-norm and causal. Any other config is refused with the field and value that has no
counterpart (`hf_family`): a directory that loads but computes something else would be worse than none.

Weight layouts: one table per family in models/hf_layout.py, which both directions read. GPT-2 keeps
our names with four Conv1D weights transposed, and always has biases: bias=False exports zeros, which
add nothing. Llama and Mixtral rename every layer and split c_attn into q, k, v and a SwiGLU c_fc into
gate and up; Mixtral's experts also load from transformers' fused in-memory layout.
Routing agrees: both take softmax over all experts, keep the top_k, and renormalise their weights.
Training differences that do not change the logits: dropout (GPT-2 has our three, embeddings,
attention weights and residual branches, so it is carried over; Llama and Mixtral drop attention
weights only, so a Llama-shaped model with dropout is refused), and Mixtral's load-balancing loss,
which transformers adds only with output_router_logits=True (off in the export) and which averages
the fractions and probabilities over all layers before multiplying them, where we average per block
(the same for one layer).

config.json spells out every number where transformers' defaults differ from ours (eps, RoPE theta,
tied embeddings, MLP width, head_dim, dtype and torch_dtype for older readers), and keeps our
GPTConfig under "tinygrad_like", so from_pretrained gets back the identical model (bias=False,
dropout) that the transformers fields alone cannot say. Files are written into a temporary
directory beside the target, then renamed.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

from models import hf_layout
from models.config import GPTConfig
from nn.module import as_array

ARCHITECTURES = {"gpt2": "GPT2LMHeadModel", "llama": "LlamaForCausalLM", "mixtral": "MixtralForCausalLM"}
MODEL_TYPES = {v: k for k, v in ARCHITECTURES.items()}
OURS = "tinygrad_like"          # config.json key holding our GPTConfig


# ---------------------------------------------------------------- which family?

def hf_family(config: GPTConfig) -> str:
    """"gpt2", "llama" or "mixtral"; a ValueError naming the field and value no transformers class has."""
    c = config

    def refuse(field, why):
        raise ValueError(f"save_pretrained: {field}={getattr(c, field)!r} has no exact counterpart in "
                         f"transformers: {why}")

    if c.attn_only:
        refuse("attn_only", "GPT-2, Llama and Mixtral blocks all have an MLP")
    if not c.causal:
        refuse("causal", "GPT2LMHeadModel, LlamaForCausalLM and MixtralForCausalLM always mask the future")
    if not c.prenorm:
        refuse("prenorm", "GPT-2, Llama and Mixtral are pre-norm blocks, x + f(norm(x))")
    if c.pos == "learned":
        if c.norm != "layernorm":
            refuse("norm", "with pos='learned' the counterpart is GPT-2, which uses LayerNorm")
        if c.mlp not in ("gelu", "relu"):
            refuse("mlp", "with pos='learned' the counterpart is GPT-2, whose MLP is not gated "
                          "(gelu or relu); a SwiGLU model needs pos='rope', norm='rmsnorm' (Llama)")
        if c.kv_heads != c.n_head:
            refuse("n_kv_head", f"GPT-2 has one key/value head per query head (n_head={c.n_head})")
        if c.n_expert:
            refuse("n_expert", "GPT-2 has no mixture of experts; Mixtral needs pos='rope', norm='rmsnorm', "
                               "mlp='swiglu'")
        return "gpt2"
    if c.norm != "rmsnorm":
        refuse("norm", "with pos='rope' the counterparts are Llama and Mixtral, which use RMSNorm")
    if c.mlp != "swiglu":
        refuse("mlp", "with pos='rope' the counterparts are Llama and Mixtral, whose MLP is SwiGLU "
                      "(silu(gate) * up); a plain gelu/relu MLP with RoPE exists in none of them")
    if c.dropout:
        refuse("dropout", "Llama and Mixtral drop out attention weights only, not the embeddings or the "
                          "residual branches, so training would differ (inference would not): export a copy "
                          "built with dropout=0.0 and the same weights")
    if c.n_expert == 0:
        return "llama"
    if c.bias:
        refuse("bias", "Mixtral has no biases (MixtralConfig has no attention_bias or mlp_bias)")
    return "mixtral"


# ---------------------------------------------------------------- our model -> transformers

def hf_config(model) -> dict:
    """config.json for `model` (a GPT): transformers' fields with our numbers, plus our GPTConfig."""
    c = model.config
    family = hf_family(c)
    block = model.transformer.h[0]
    common = dict(architectures=[ARCHITECTURES[family]], model_type=family, vocab_size=c.vocab_size,
                  tie_word_embeddings=c.tie_weights, dtype=c.dtype, torch_dtype=c.dtype,
                  bos_token_id=None, eos_token_id=None, pad_token_id=None, use_cache=True, initializer_range=0.02)
    if family == "gpt2":
        out = dict(n_positions=c.block_size, n_embd=c.n_embd, n_layer=c.n_layer, n_head=c.n_head,
                   n_inner=c.hidden, activation_function="gelu_new" if c.mlp == "gelu" else "relu",
                   layer_norm_epsilon=block.ln_1.eps, resid_pdrop=c.dropout, embd_pdrop=c.dropout,
                   attn_pdrop=c.dropout, scale_attn_weights=True, scale_attn_by_inverse_layer_idx=False,
                   reorder_and_upcast_attn=False, add_cross_attention=False)
    else:
        out = dict(max_position_embeddings=c.block_size, hidden_size=c.n_embd, num_hidden_layers=c.n_layer,
                   num_attention_heads=c.n_head, num_key_value_heads=c.kv_heads, head_dim=c.head_dim,
                   intermediate_size=c.hidden, hidden_act="silu", rms_norm_eps=block.ln_1.eps,
                   rope_parameters={"rope_type": "default", "rope_theta": float(block.attn.rope.base)},
                   attention_dropout=0.0)
        if family == "llama":
            out.update(attention_bias=c.bias, mlp_bias=c.bias, pretraining_tp=1)
        else:
            out.update(num_local_experts=c.n_expert, num_experts_per_tok=c.top_k, sliding_window=None,
                       router_jitter_noise=0.0, output_router_logits=False,
                       router_aux_loss_coef=float(model.aux_loss_coef))
    return {**common, **out, OURS: c.to_dict()}


def hf_state_dict(model) -> dict[str, np.ndarray]:
    """Our weights under the names and layouts transformers' class for this config expects."""
    c = model.config
    family = hf_family(c)
    if family == "gpt2":
        sd = model.to_hf_gpt2_state_dict()
        if c.tie_weights:
            del sd["lm_head.weight"]       # transformers ties it to wte itself (and saves it once)
        if not c.bias:                     # GPT-2 always adds biases: zeros compute the same thing
            for name in _gpt2_bias_names(c):
                sd[name] = np.zeros(_gpt2_bias_size(c, name), dtype=c.dtype)
        return sd
    out = hf_layout.to_theirs(hf_layout.TABLES[family], model.state_dict(), c)  # lm_head only when untied
    return {k: np.ascontiguousarray(v).copy() for k, v in out.items()}


def _gpt2_bias_names(c: GPTConfig) -> list[str]:
    names = ["transformer.ln_f.bias"]
    for i in range(c.n_layer):
        names += [f"transformer.h.{i}.{n}.bias" for n in ("ln_1", "attn.c_attn", "attn.c_proj", "ln_2",
                                                             "mlp.c_fc", "mlp.c_proj")]
    return names


def _gpt2_bias_size(c: GPTConfig, name: str) -> int:
    if name.endswith("attn.c_attn.bias"):
        return 3 * c.n_embd
    if name.endswith("mlp.c_fc.bias"):
        return c.hidden
    return c.n_embd


def generation_config(model) -> dict:
    """Greedy by default and no end-of-text token: model.generate(ids, max_new_tokens=n) then runs n
    steps of argmax, as GPT.generate(ids, n, temperature=0) does."""
    return dict(do_sample=False, bos_token_id=None, eos_token_id=None, pad_token_id=None,
                max_length=model.config.block_size)


def save_pretrained(model, directory, overwrite: bool = False, extra_files: dict | None = None) -> Path:
    """Write `model` as a transformers directory; see GPT.save_pretrained. extra_files: {name: text}."""
    from safetensors.numpy import save_file

    directory = Path(directory)
    config = hf_config(model)               # refuses unsupported configs before anything is touched
    weights = hf_state_dict(model)
    if directory.exists():
        if not directory.is_dir():
            raise FileExistsError(f"save_pretrained: {directory} exists and is not a directory")
        if any(directory.iterdir()) and not overwrite:
            raise FileExistsError(f"save_pretrained: {directory} is not empty; pass overwrite=True to replace it")
    directory.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", suffix=".tmp", dir=directory.parent))
    try:
        save_file(weights, str(tmp / "model.safetensors"), metadata={"format": "pt"})
        (tmp / "config.json").write_text(json.dumps(config, indent=2) + "\n")
        (tmp / "generation_config.json").write_text(json.dumps(generation_config(model), indent=2) + "\n")
        for name, text in (extra_files or {}).items():
            (tmp / name).write_text(text, encoding="utf-8")
        for f in tmp.iterdir():
            with open(f, "rb") as fh:
                os.fsync(fh.fileno())
        if directory.exists():               # swap: the old directory is removed only once the new one is whole
            old = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", suffix=".old", dir=directory.parent))
            os.replace(directory, old / "d")
            os.replace(tmp, directory)
            shutil.rmtree(old)
        else:
            os.replace(tmp, directory)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return directory


# ---------------------------------------------------------------- transformers -> our model

def load_pretrained(cls, path, dtype: str | None = None):
    """Read a transformers directory (GPT-2, Llama or Mixtral layout) into `cls` (GPT); see
    GPT.from_pretrained. dtype None: the file's dtype when it is float64, else float32."""
    from safetensors.numpy import load_file

    path = Path(path)
    config_file, weights_file = path / "config.json", path / "model.safetensors"
    for f in (config_file, weights_file):
        if not f.is_file():
            raise FileNotFoundError(f"from_pretrained: {f} does not exist (expected a Hugging Face model "
                                    "directory with config.json and model.safetensors)")
    hf = json.loads(config_file.read_text())
    family = _family_of(hf, config_file)
    if dtype is None:
        dtype = "float64" if (hf.get("dtype") or hf.get("torch_dtype")) == "float64" else "float32"
    if family == "gpt2":
        config = _gpt2_config(hf, dtype)
    else:
        config = _llama_config(hf, family, dtype)
    if OURS in hf:                          # our own export: the GPTConfig it was made from
        ours = GPTConfig.from_dict({**hf[OURS], "dtype": dtype})
        differ = [k for k in ("vocab_size", "block_size", "n_layer", "n_head", "n_embd", "kv_heads", "hidden",
                              "tie_weights", "n_expert", "top_k", "mlp", "norm", "pos")
                  if getattr(ours, k) != getattr(config, k)]
        if differ:
            raise ValueError(f"from_pretrained: {config_file}: the transformers fields and the '{OURS}' "
                             f"config disagree on {differ} (was the file edited?)")
        if family != "gpt2" and ours.bias != config.bias:
            raise ValueError(f"from_pretrained: {config_file}: bias disagrees with attention_bias/mlp_bias")
        config = ours
    try:
        weights = load_file(str(weights_file))
    except Exception as e:  # safetensors raises its own error types for a damaged header or body
        raise ValueError(f"from_pretrained: cannot read {weights_file}: {e}") from None
    if family == "gpt2":
        if not config.bias:
            weights = _drop_zero_biases(weights, config, weights_file)
        return cls.from_hf_gpt2(weights, config)
    model = cls(config)
    names = [name for name, _ in model.named_parameters()]
    model.load_state_dict(_llama_to_ours(weights, config, family, weights_file, names))
    return model


def _family_of(hf: dict, config_file: Path) -> str:
    archs = hf.get("architectures") or []
    kind = hf.get("model_type")
    for a in archs:
        if a in MODEL_TYPES:
            return MODEL_TYPES[a]
    if kind in ARCHITECTURES and not archs:
        return kind
    raise ValueError(f"from_pretrained: {config_file} names architecture {archs or None} (model_type "
                     f"{kind!r}); supported: {sorted(MODEL_TYPES)}")


_HF_ACTIVATIONS = {"gelu_new": "gelu", "gelu_pytorch_tanh": "gelu", "relu": "relu"}


def _gpt2_config(hf: dict, dtype: str) -> GPTConfig:
    missing = [k for k in ("n_layer", "n_head", "n_embd", "vocab_size", "n_positions") if k not in hf]
    if missing:
        raise ValueError(f"from_pretrained: config.json lacks {missing}")
    act = hf.get("activation_function", "gelu_new")
    if act not in _HF_ACTIVATIONS:
        raise ValueError(f"from_pretrained: activation_function {act!r} is not supported "
                         f"(supported: {sorted(_HF_ACTIVATIONS)})")
    eps = hf.get("layer_norm_epsilon", 1e-5)
    if not math.isclose(eps, 1e-5):
        raise ValueError(f"from_pretrained: layer_norm_epsilon {eps} differs from our LayerNorm's 1e-5")
    for key, ok in (("scale_attn_weights", True), ("scale_attn_by_inverse_layer_idx", False),
                    ("add_cross_attention", False)):
        if hf.get(key, ok) != ok:
            raise ValueError(f"from_pretrained: {key}={hf[key]!r} is not supported (our attention needs {ok})")
    return GPTConfig(vocab_size=hf["vocab_size"], block_size=hf["n_positions"], n_layer=hf["n_layer"],
                     n_head=hf["n_head"], n_embd=hf["n_embd"], mlp_hidden=hf.get("n_inner"),
                     mlp=_HF_ACTIVATIONS[act], tie_weights=hf.get("tie_word_embeddings", True), dtype=dtype)


def _llama_config(hf: dict, family: str, dtype: str) -> GPTConfig:
    """GPTConfig of a Llama / Mixtral config.json; a ValueError for numbers our layers do not have."""
    from nn.norm import RMSNorm
    from nn.rope import RoPE

    need = ["vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
            "max_position_embeddings"] + (["num_local_experts"] if family == "mixtral" else [])
    missing = [k for k in need if k not in hf]
    if missing:
        raise ValueError(f"from_pretrained: config.json ({family}) lacks {missing}")
    C, nh = hf["hidden_size"], hf["num_attention_heads"]
    ours_eps = RMSNorm(1).eps
    ours_theta = RoPE(2, 1).base
    rope = hf.get("rope_parameters") or {}
    theta = rope.get("rope_theta", hf.get("rope_theta", 1e6 if family == "mixtral" else 1e4))
    checks = [("hidden_act", hf.get("hidden_act", "silu"), "silu"),
              ("rms_norm_eps", hf.get("rms_norm_eps", 1e-5 if family == "mixtral" else 1e-6), ours_eps),
              ("rope_theta", theta, ours_theta),
              ("rope_type", rope.get("rope_type", "default"), "default"),
              ("rope_scaling", hf.get("rope_scaling"), None),
              ("head_dim", hf.get("head_dim") or C // nh, C // nh),
              ("pretraining_tp", hf.get("pretraining_tp", 1), 1),
              ("sliding_window", hf.get("sliding_window"), None)]
    for key, value, ok in checks:
        if value != ok and not (isinstance(ok, float) and isinstance(value, (int, float)) and math.isclose(value, ok)):
            raise ValueError(f"from_pretrained: {key}={value!r} in config.json; our layers compute with {ok!r}")
    bias = hf.get("attention_bias", False)
    if hf.get("mlp_bias", False) != bias:
        raise ValueError(f"from_pretrained: attention_bias={bias} but mlp_bias={hf.get('mlp_bias')}; our "
                         "config has one bias switch for both")
    return GPTConfig(vocab_size=hf["vocab_size"], block_size=hf["max_position_embeddings"],
                     n_layer=hf["num_hidden_layers"], n_head=nh, n_embd=C,
                     n_kv_head=hf.get("num_key_value_heads") or nh, bias=bias, norm="rmsnorm", mlp="swiglu",
                     mlp_hidden=hf["intermediate_size"], pos="rope",
                     tie_weights=hf.get("tie_word_embeddings", False),
                     n_expert=hf.get("num_local_experts", 0) if family == "mixtral" else 0,
                     top_k=hf.get("num_experts_per_tok", 2), dtype=dtype)


def _drop_zero_biases(weights: dict, config: GPTConfig, weights_file) -> dict:
    weights = {k.removeprefix("transformer."): v for k, v in weights.items()}
    for name in _gpt2_bias_names(config):
        key = name.removeprefix("transformer.")
        if key in weights and np.any(weights[key]):
            raise ValueError(f"from_pretrained: {weights_file} holds a non-zero '{key}', but the model was "
                             "exported with bias=False (its biases must be zeros)")
        weights.pop(key, None)
    return weights


def _llama_to_ours(w: dict, c: GPTConfig, family: str, weights_file, names: list[str]) -> dict:
    """transformers' Llama / Mixtral names -> our parameters `names`, by the family's table
    (models/hf_layout.py, the table hf_state_dict writes by)."""
    w = dict(w)
    if family == "mixtral":
        w = _unfuse_experts(w, c)
    if c.tie_weights and "lm_head.weight" in w:
        names.append("lm_head.weight")                         # GPT.load_state_dict checks it equals wte
    out, missing = hf_layout.to_ours(hf_layout.TABLES[family], w, names)
    if missing:
        raise KeyError(f"from_pretrained: {weights_file} lacks {missing[:6]}")
    if w:
        raise KeyError(f"from_pretrained: {weights_file} holds tensors this {family} model has no place for: "
                       f"{sorted(w)[:6]}")
    return {k: np.asarray(v, dtype=c.dtype) for k, v in out.items()}


def _unfuse_experts(w: dict, c: GPTConfig) -> dict:
    """Mixtral's fused in-memory layout (mlp.gate, mlp.experts.gate_up_proj (E, 2H, C), down_proj
    (E, C, H) per layer) -> the per-expert names transformers saves (block_sparse_moe.experts.e.w1 ...)."""
    for i in range(c.n_layer):
        m, moe = f"model.layers.{i}.mlp.", f"model.layers.{i}.block_sparse_moe."
        if m + "gate.weight" not in w:
            continue
        w[moe + "gate.weight"] = w.pop(m + "gate.weight")
        gate_up, down = w.pop(m + "experts.gate_up_proj"), w.pop(m + "experts.down_proj")
        for e in range(c.n_expert):
            w[moe + f"experts.{e}.w1.weight"], w[moe + f"experts.{e}.w3.weight"] = np.split(gate_up[e], [c.hidden])
            w[moe + f"experts.{e}.w2.weight"] = down[e]
    return w


# ---------------------------------------------------------------- GPT-2's state dict, both ways

def from_hf_gpt2(cls, state_dict: dict, config: GPTConfig):
    """A model of class `cls` built from `config` holding Hugging Face GPT-2 weights.

    HF names are ours without "transformer." (the prefix is optional here), and its Conv1D layers
    store weight as (in, out), the transpose of Linear's (out, in): attn.c_attn, attn.c_proj,
    mlp.c_fc and mlp.c_proj weights are transposed. The causal-mask buffers attn.bias and
    attn.masked_bias are skipped; lm_head.weight is optional when the embeddings are tied.
    """
    model = cls(config)
    params = dict(model.named_parameters())
    given = {}  # the name with "transformer." -> the key as given
    for key in state_dict:
        name = key.removeprefix("transformer.")
        if not name.endswith((".attn.bias", ".attn.masked_bias")):              # buffers, not parameters
            given[name if name == "lm_head.weight" else "transformer." + name] = key
    weights = {name: as_array(state_dict[key]) for name, key in given.items()}
    names = list(params) + (["lm_head.weight"] if config.tie_weights and "lm_head.weight" in weights else [])
    ours, missing = hf_layout.to_ours(hf_layout.GPT2, weights, names)
    if weights:
        key = given[next(iter(weights))]
        raise KeyError(f"from_hf_gpt2: '{key}' is not a parameter of this model "
                       f"(it expects {sorted(_hf_name(n) for n in params)[:6]}...)")
    for name, array in ours.items():
        if name in params and array.shape != params[name].shape:
            row, (theirs,) = hf_layout.row_of(hf_layout.GPT2, name)
            how = f", {array.shape} after the Conv1D transpose," if row.transpose else ""
            key = given[theirs]
            raise ValueError(f"from_hf_gpt2: '{key}' has shape {tuple(np.shape(state_dict[key]))}{how} but "
                             f"the model's '{name}' is {params[name].shape}")
    if missing:
        raise KeyError(f"from_hf_gpt2: the state dict lacks {[_hf_name(n) for n in missing]}")
    model.load_state_dict(ours)
    return model


def to_hf_gpt2_state_dict(model) -> dict[str, np.ndarray]:
    """The inverse of from_hf_gpt2: GPT2LMHeadModel's names ("transformer.h.0.attn.c_attn.weight",
    ..., "lm_head.weight") and Conv1D layout, as contiguous copies (safetensors needs contiguous)."""
    hf = hf_layout.to_theirs(hf_layout.GPT2, model.state_dict(with_tied=True), model.config)
    return {name: np.ascontiguousarray(array).copy() for name, array in hf.items()}


def _hf_name(name: str) -> str:
    return name.removeprefix("transformer.")

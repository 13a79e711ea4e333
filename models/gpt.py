"""GPT: the whole decoder-only transformer in one file, in nanoGPT's names and shapes.

    idx (B, T) ints
     -> transformer.wte(idx) + transformer.wpe(0..T-1)     (B, T, C)   (no wpe with pos="rope":
     -> transformer.drop                                               the blocks rotate q and k)
     -> transformer.h.0 .. h.{n_layer-1}  (nn.Block)       (B, T, C)
     -> transformer.ln_f
     -> lm_head                                            (B, T, vocab_size) logits

Everything else is a switch of GPTConfig (models/config.py): GQA, RoPE, SwiGLU, RMSNorm, post-norm,
bidirectional attention, mixture of experts, untied embeddings, float64 for gradchecks.

Tied embeddings: with tie_weights, `lm_head.weight` IS `transformer.wte.weight` (the same Tensor), so
`named_parameters()` and `state_dict()` list it once, under its first name, transformer.wte.weight.
nanoGPT's (PyTorch's) state dict lists it under both names; `state_dict(with_tied=True)` gives that
form, and `load_state_dict` accepts it (the two entries must then be equal).

Also here: sampling (`generate`, with a KV cache, temperature, top-k and nucleus filtering) and the
Hugging Face GPT-2 weight layout (`from_hf_gpt2`, `to_hf_gpt2_state_dict`, `from_pretrained`; the
name tables of every family: models/hf_layout.py).

References: Radford et al. 2019 (GPT-2); Karpathy's nanoGPT model.py; Holtzman et al. 2020
(nucleus sampling, https://arxiv.org/abs/1904.09751).
"""
from __future__ import annotations

import math
from numbers import Real
from pathlib import Path

import numpy as np

from models import hf_layout
from models.config import GPTConfig
from nn import Dropout, Embedding, LayerNorm, Linear, Module, ModuleDict, RMSNorm, init
from nn.attention import KVCache
from nn.block import Block
from nn.module import as_array
from tinygrad_like import Tensor, no_grad, scope
from tinygrad_like import random as _random

__all__ = ["GPT", "GPTConfig", "Transformer", "filter_logits", "sample_logits"]


class Transformer(Module):
    """The stack GPT and models.encoder.Encoder share: transformer.wte, wpe, drop, h.N, ln_f.

    `_trunk(idx)` runs it, idx (B, T) -> hidden states after ln_f (B, T, C); the subclasses put a head
    on top (lm_head) or pool the states (Encoder.embed). Parameters are left as the layers made them;
    the subclasses apply the GPT-2 init once their own layers exist.
    """

    def __init__(self, config: GPTConfig):
        if not isinstance(config, GPTConfig):
            raise TypeError(f"{type(self).__name__}: expected a GPTConfig, got {type(config).__name__}")
        self.config = c = config
        parts = dict(wte=Embedding(c.vocab_size, c.n_embd, dtype=c.dtype))
        if c.pos == "learned":
            parts["wpe"] = Embedding(c.block_size, c.n_embd, dtype=c.dtype)
        parts["drop"] = Dropout(c.dropout)
        parts["h"] = [Block(c.n_embd, c.n_head, c.n_kv_head, mlp_hidden=c.hidden, mlp=c.mlp, norm=c.norm,
                            prenorm=c.prenorm, causal=c.causal, rope=c.pos == "rope", bias=c.bias,
                            dropout=c.dropout, n_expert=c.n_expert, top_k=c.top_k, dtype=c.dtype,
                            attn_only=c.attn_only)
                      for _ in range(c.n_layer)]
        parts["ln_f"] = LayerNorm(c.n_embd, bias=c.bias, dtype=c.dtype) if c.norm == "layernorm" \
            else RMSNorm(c.n_embd, dtype=c.dtype)
        self.transformer = ModuleDict(**parts)
        self.last_aux_loss = None

    def _trunk(self, idx: np.ndarray, start: int = 0, caches=None, return_weights=False):
        """Embeddings, blocks and ln_f: idx (B, T) at positions start.. -> x (B, T, C) [, weights]."""
        with scope("transformer"):  # the ops' scopes then match the parameter names, transformer.h.0...
            return self._trunk_layers(idx, start, caches, return_weights)

    def _trunk_layers(self, idx, start, caches, return_weights):
        B, T = idx.shape
        x = self.transformer.wte(idx)                                        # (B, T, C)
        if self.config.pos == "learned":
            x = x + self.transformer.wpe(np.arange(start, start + T))        # (T, C) broadcast over B
        x = self.transformer.drop(x)
        maps = []
        for i, block in enumerate(self.transformer.h):
            cache = caches[i] if caches is not None else None
            if return_weights:
                x, att = block(x, kv_cache=cache, return_weights=True)      # att (B, nh, T, T_k)
                maps.append(att)
            else:
                x = block(x, kv_cache=cache)
        if self.config.n_expert > 0:
            self.last_aux_loss = float(self._mean_aux_loss().item())
        x = self.transformer.ln_f(x)
        return (x, maps) if return_weights else x

    def _mean_aux_loss(self) -> Tensor:
        """Mean over blocks of the MoE load-balancing loss of the last forward (a scalar Tensor; kept
        out of the module's attributes, where a Tensor with a graph would count as a parameter)."""
        aux = [block.aux_loss for block in self.transformer.h]
        return sum(aux[1:], aux[0]) / len(aux)

    def _check_idx(self, idx, crop: bool = False) -> np.ndarray:
        """idx as an integer (B, T) numpy array, or a clear error. crop=True keeps the last block_size."""
        ids = np.asarray(idx._data if isinstance(idx, Tensor) else idx)
        name = type(self).__name__
        if ids.dtype.kind not in "iu":
            raise TypeError(f"{name}: idx must hold integer token ids, got dtype {ids.dtype}")
        if ids.ndim != 2 or ids.shape[1] == 0:
            raise ValueError(f"{name}: idx must be (B, T) with T >= 1, got shape {ids.shape}")
        if ids.shape[1] > self.config.block_size:
            if not crop:
                raise ValueError(f"{name}: sequence of length {ids.shape[1]} is longer than block_size "
                                 f"{self.config.block_size}")
            ids = ids[:, -self.config.block_size:]
        bad = ids[(ids < 0) | (ids >= self.config.vocab_size)]
        if bad.size:
            raise IndexError(f"{name}: token id {bad.flat[0]} is outside the vocabulary "
                             f"(vocab_size {self.config.vocab_size}: ids 0..{self.config.vocab_size - 1})")
        return ids.astype(np.int64, copy=False)

    def attention_maps(self, idx) -> list[np.ndarray]:
        """One (B, n_head, T, T) numpy array per block: who each token attends to (rows sum to 1).
        Runs in eval mode (no dropout) and without building a graph."""
        idx = self._check_idx(idx)
        with no_grad(), _eval_mode(self):
            _, maps = self._trunk(idx, return_weights=True)
        return [m.numpy().copy() for m in maps]


class GPT(Transformer):
    """The language model. `logits, loss = model(idx, targets)`; see the module docstring for the layout.

    aux_loss_coef: weight of the mixture-of-experts load-balancing term in the training loss,
    loss = cross-entropy + aux_loss_coef · mean over blocks of MoE.aux_loss (0.01, as in the Switch
    Transformer; GPTConfig has no field for it, so it is a class attribute you may override per model).
    `last_aux_loss` holds that mean (a float) after each forward of a MoE model, None otherwise; a
    perfectly balanced router gives top_k (see nn.moe).
    """

    aux_loss_coef = 0.01

    def __init__(self, config: GPTConfig):
        super().__init__(config)
        self.lm_head = Linear(config.n_embd, config.vocab_size, bias=False, dtype=config.dtype)
        if config.tie_weights:
            self.lm_head.weight = self.transformer.wte.weight  # one Tensor, two names (weight tying)
        init.gpt2_init_(self, config.n_layer)  # N(0, 0.02), c_proj N(0, 0.02/√(2·n_layer)), biases 0, norms 1

    def forward(self, idx, targets=None):
        """idx (B, T) ints -> (logits (B, T, vocab_size), loss or None).

        targets (B, T) ints, nanoGPT's convention: targets[:, t] is the token after idx[:, t], -1 is
        ignored. loss = mean cross-entropy over the kept positions (+ the MoE term, see the class).
        """
        idx = self._check_idx(idx)
        x = self._trunk(idx)                       # (B, T, C)
        logits = self.lm_head(x)                   # (B, T, vocab_size)
        loss = None
        if targets is not None:
            targets = np.asarray(targets._data if isinstance(targets, Tensor) else targets)
            if targets.shape != idx.shape or targets.dtype.kind not in "iu":
                raise ValueError(f"GPT: targets must be integers of the shape of idx {idx.shape}, "
                                 f"got {targets.dtype} {targets.shape}")
            loss = logits.sparse_categorical_crossentropy(targets, ignore_index=-1)
            if self.config.n_expert > 0:
                loss = loss + self.aux_loss_coef * self._mean_aux_loss()
        return logits, loss

    # ------------------------------------------------------------ looking inside (models/inside.py)
    def run_with_cache(self, idx, hooks: dict | None = None) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """(logits (B, T, vocab_size), {activation name: numpy array}), in eval mode without a graph; the
        logits are bit-identical to self(idx)'s. hooks as in run_with_hooks, applied before caching.
        The names (transformer.h.1.resid_pre, ...attn.pattern, ...) are listed in models/inside.py."""
        from models.inside import run_with_cache
        return run_with_cache(self, idx, hooks)

    def run_with_hooks(self, idx, hooks: dict) -> np.ndarray:
        """Logits (B, T, vocab_size) with hooks {activation name: fn} applied: fn(a numpy copy of the
        activation) returns None (read it) or a replacement of the same shape (patch or ablate it)."""
        from models.inside import run_with_hooks
        return run_with_hooks(self, idx, hooks)

    # ------------------------------------------------------------ state dicts
    def state_dict(self, with_tied: bool = False) -> dict[str, np.ndarray]:
        """{name: array}. A tied lm_head is listed once, as transformer.wte.weight; with_tied=True adds
        "lm_head.weight" (the same array), the layout of nanoGPT's / PyTorch's state_dict()."""
        sd = super().state_dict()
        if with_tied and self.config.tie_weights:
            sd["lm_head.weight"] = sd["transformer.wte.weight"]
        return sd

    def load_state_dict(self, state: dict, strict: bool = True) -> None:
        """Module.load_state_dict, also accepting nanoGPT's tied layout: with tie_weights, an
        "lm_head.weight" entry must equal transformer.wte.weight (one matrix cannot hold two values)."""
        state = dict(state)
        if self.config.tie_weights and "lm_head.weight" in state:
            head = as_array(state.pop("lm_head.weight"))
            if "transformer.wte.weight" not in state:
                state["transformer.wte.weight"] = head
            elif not np.array_equal(head, as_array(state["transformer.wte.weight"])):
                raise ValueError("load_state_dict: this GPT ties lm_head to transformer.wte, but the state dict "
                                 "has different 'lm_head.weight' and 'transformer.wte.weight' (build the model "
                                 "with tie_weights=False to load untied weights)")
        super().load_state_dict(state, strict)

    # ------------------------------------------------------------ sampling
    def generate(self, idx, max_new_tokens: int, temperature: float = 1.0, top_k: int | None = None,
                 top_p: float | None = None, use_cache: bool = True, seed: int | None = None) -> np.ndarray:
        """Append max_new_tokens sampled tokens to idx (B, T); returns a numpy int array (B, T + new).

        Each step reads at most the last block_size tokens. temperature=0 is greedy (argmax); otherwise
        the logits are divided by temperature, filtered by top_k / top_p (see filter_logits) and
        sampled with the library RNG, or a fresh numpy Generator when `seed` is given.

        KV cache: the context is read once (prefill), then each step feeds only the newest token, whose
        keys and values are appended to one KVCache per block, so a step costs O(context), not
        O(context²). When the next token would not fit in block_size, the cache is dropped and the
        last block_size tokens are read afresh (positions restart at 0), exactly as the uncached path
        crops: both paths always see the same window, so they give the same tokens. Past that point
        every step re-reads the window (the learned positions of every token shift, so old keys are
        stale), i.e. it runs at uncached speed. A causal=False model cannot use a cache (a new token
        changes every earlier token's state), so it always re-reads the window.
        Runs without a graph and in eval mode (no dropout), restoring the previous mode.
        """
        ids = np.asarray(idx._data if isinstance(idx, Tensor) else idx)
        self._check_idx(ids, crop=True)                                    # type, shape and vocabulary
        ids = ids.astype(np.int64)
        if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, (int, np.integer)) \
                or max_new_tokens < 0:
            raise ValueError(f"generate: max_new_tokens must be an integer >= 0, got {max_new_tokens!r}")
        _check_sampling(temperature, top_k, top_p)
        rng = np.random.default_rng(seed) if seed is not None else _random.rng()
        block = self.config.block_size
        use_cache = use_cache and self.config.causal
        caches = None
        with no_grad(), _eval_mode(self):
            for _ in range(max_new_tokens):
                if not use_cache:
                    x = self._trunk(ids[:, -block:])                              # (B, T, C)
                elif caches is None or caches[0].length + 1 > block:            # prefill (or re-read)
                    caches = [KVCache(capacity=block) for _ in self.transformer.h]
                    x = self._trunk(ids[:, -block:], caches=caches)
                else:                                                           # one new token
                    x = self._trunk(ids[:, -1:], start=caches[0].length, caches=caches)  # (B, 1, C)
                logits = self.lm_head(x[:, -1, :]).numpy()                      # (B, vocab_size)
                nxt = sample_logits(logits, temperature, top_k, top_p, rng)     # (B,)
                ids = np.concatenate([ids, nxt[:, None]], axis=1)
        return ids

    # ------------------------------------------------------------ Hugging Face GPT-2 layout
    @classmethod
    def from_hf_gpt2(cls, state_dict: dict, config: GPTConfig) -> "GPT":
        """A GPT built from `config` holding Hugging Face GPT-2 weights.

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

    def to_hf_gpt2_state_dict(self) -> dict[str, np.ndarray]:
        """The inverse of from_hf_gpt2: GPT2LMHeadModel's names ("transformer.h.0.attn.c_attn.weight",
        ..., "lm_head.weight") and Conv1D layout, as contiguous copies (safetensors needs contiguous)."""
        hf = hf_layout.to_theirs(hf_layout.GPT2, self.state_dict(with_tied=True), self.config)
        return {name: np.ascontiguousarray(array).copy() for name, array in hf.items()}

    @classmethod
    def from_pretrained(cls, path, dtype: str | None = None) -> "GPT":
        """Load a local Hugging Face directory (config.json + model.safetensors, no network) in the GPT-2,
        Llama or Mixtral layout, written by transformers or by `save_pretrained` (whose config.json
        also holds our GPTConfig, so the model comes back identical). dtype None: float64 when the
        file says so, else float32. A config our layers cannot compute exactly (another RMSNorm eps,
        RoPE theta or activation, an unsupported architecture) is a ValueError naming it.
        Layouts and checks: models/hf_export.py.
        """
        from models.hf_export import load_pretrained
        return load_pretrained(cls, path, dtype)

    def save_pretrained(self, directory, overwrite: bool = False, tokenizer=None, readme: str | None = None) -> Path:
        """Write a directory that transformers loads with its own classes (no code of ours):
        config.json, model.safetensors, generation_config.json, and with `tokenizer` (a BPETokenizer or
        CharTokenizer) its tokenizer.json + tokenizer_config.json; with `readme`, README.md (a model card).

        GPT-2 shaped configs -> GPT2LMHeadModel, Llama shaped -> LlamaForCausalLM, Llama shaped with
        experts -> MixtralForCausalLM; any other config is a ValueError naming the field that has no
        counterpart (models/hf_export.py). A non-empty directory is refused unless overwrite=True; the
        files are written to a temporary directory beside it and renamed into place, so a failure
        leaves no half-written directory.
        """
        from models.hf_export import save_pretrained
        extra = tokenizer.to_hf_files(self.config.block_size) if tokenizer is not None else {}
        if readme is not None:
            extra["README.md"] = readme
        return save_pretrained(self, directory, overwrite, extra_files=extra)


# ---------------------------------------------------------------- Hugging Face names

def _hf_name(name: str) -> str:
    return name.removeprefix("transformer.")


class _eval_mode:
    """`with _eval_mode(model):` eval mode inside, the previous mode restored after."""

    def __init__(self, model: Module):
        self.model = model

    def __enter__(self):
        self.was_training = self.model.training
        self.model.eval()

    def __exit__(self, *exc):
        self.model.train(self.was_training)


# ---------------------------------------------------------------- sampling helpers (numpy, no graph)

def _check_sampling(temperature, top_k, top_p) -> None:
    if not (isinstance(temperature, Real) and temperature >= 0 and math.isfinite(temperature)):
        raise ValueError(f"generate: temperature must be a number >= 0 (0 is greedy), got {temperature!r}")
    if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or top_k < 1):
        raise ValueError(f"generate: top_k must be an integer >= 1 or None, got {top_k!r}")
    if top_p is not None and not (isinstance(top_p, Real) and 0 < top_p <= 1):
        raise ValueError(f"generate: top_p must be in (0, 1] or None, got {top_p!r}")


def filter_logits(logits: np.ndarray, top_k: int | None = None, top_p: float | None = None) -> np.ndarray:
    """logits (B, V) with the tokens that may not be sampled set to -inf (a float64 copy).

    top_k: keep the k largest logits of each row (ties at the k-th value are all kept).
    top_p (nucleus): keep the smallest set of most probable tokens whose probability reaches p: a
    token is dropped when the tokens more probable than it already sum to >= p. The most probable
    token is always kept.
    """
    out = np.array(logits, dtype=np.float64)
    if top_k is not None and top_k < out.shape[-1]:
        kth = np.sort(out, axis=-1)[:, -top_k][:, None]                    # (B, 1) the k-th largest
        out[out < kth] = -np.inf
    if top_p is not None and top_p < 1:
        order = np.argsort(-out, axis=-1, kind="stable")                    # (B, V) most probable first
        probs = np.take_along_axis(_softmax(out), order, axis=-1)
        before = np.cumsum(probs, axis=-1) - probs                          # mass of the better tokens
        drop = np.zeros_like(out, dtype=bool)
        np.put_along_axis(drop, order, before >= top_p, axis=-1)
        out[drop] = -np.inf
    return out


def sample_logits(logits: np.ndarray, temperature: float = 1.0, top_k: int | None = None,
                  top_p: float | None = None, rng: np.random.Generator | None = None) -> np.ndarray:
    """One token per row of logits (B, V): argmax for temperature 0, else a draw from
    softmax(filter_logits(logits / temperature)) by inverse CDF with one uniform number per row."""
    logits = np.asarray(logits, dtype=np.float64)
    if temperature == 0:
        return np.argmax(logits, axis=-1)
    probs = _softmax(filter_logits(logits / temperature, top_k, top_p))     # (B, V)
    u = (rng if rng is not None else _random.rng()).random((logits.shape[0], 1))
    cdf = np.cumsum(probs, axis=-1)
    return np.minimum((cdf < u * cdf[:, -1:]).sum(-1), logits.shape[-1] - 1)


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)

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

Also here: `generate`, with a KV cache (the choice of each token: models/sampling.py). The Hugging Face
layouts live in models/hf_export.py and the interpretability tools in models/inside.py; the class has a
thin method for each, which delegates.

References: Radford et al. 2019 (GPT-2); Karpathy's nanoGPT model.py.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from models import hf_export, inside
from models.config import GPTConfig
from models.sampling import check_sampling, filter_logits, sample_logits
from nn import Dropout, Embedding, LayerNorm, Linear, Module, ModuleDict, RMSNorm, init
from nn.attention import KVCache
from nn.block import Block
from nn.module import as_array, eval_mode
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
        """Embeddings, blocks and ln_f: idx (B, T) at positions start.. -> x (B, T, C) [, weights]; with
        caches (one KVCache per block) the blocks attend over what they hold too."""
        with scope("transformer"):  # the ops' scopes then match the parameter names, transformer.h.0...
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
        """One (B, n_head, T, T) array per block, rows summing to 1: models/inside.py."""
        return inside.attention_maps(self, idx)


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
        """(logits, {activation name: numpy array}), in eval mode without a graph: models/inside.py."""
        return inside.run_with_cache(self, idx, hooks)

    def run_with_hooks(self, idx, hooks: dict) -> np.ndarray:
        """Logits with hooks {activation name: fn} reading or replacing activations: models/inside.py."""
        return inside.run_with_hooks(self, idx, hooks)

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
        check_sampling(temperature, top_k, top_p)
        rng = np.random.default_rng(seed) if seed is not None else _random.rng()
        block = self.config.block_size
        use_cache = use_cache and self.config.causal
        caches = None
        with no_grad(), eval_mode(self):
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

    # ------------------------------------------------------------ Hugging Face layouts (models/hf_export.py)
    @classmethod
    def from_hf_gpt2(cls, state_dict: dict, config: GPTConfig) -> "GPT":
        """A GPT of `config` holding Hugging Face GPT-2 weights (Conv1D layouts transposed): hf_export."""
        return hf_export.from_hf_gpt2(cls, state_dict, config)

    def to_hf_gpt2_state_dict(self) -> dict[str, np.ndarray]:
        """GPT2LMHeadModel's names and Conv1D layout, as contiguous copies: hf_export."""
        return hf_export.to_hf_gpt2_state_dict(self)

    @classmethod
    def from_pretrained(cls, path, dtype: str | None = None) -> "GPT":
        """Load a local Hugging Face directory (config.json + model.safetensors, no network) in the GPT-2,
        Llama or Mixtral layout; dtype None: the file's. A config our layers cannot compute exactly is a
        ValueError naming it. Layouts and checks: models/hf_export.py."""
        return hf_export.load_pretrained(cls, path, dtype)

    def save_pretrained(self, directory, overwrite: bool = False, tokenizer=None, readme: str | None = None) -> Path:
        """Write a directory that transformers loads with its own classes (GPT2LMHeadModel, LlamaForCausalLM
        or MixtralForCausalLM): config.json, model.safetensors, generation_config.json, with `tokenizer` its
        tokenizer files, with `readme` a model card. Written beside and renamed into place: models/hf_export.py."""
        extra = tokenizer.to_hf_files(self.config.block_size) if tokenizer is not None else {}
        if readme is not None:
            extra["README.md"] = readme
        return hf_export.save_pretrained(self, directory, overwrite, extra_files=extra)

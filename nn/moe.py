"""`MoE`: a mixture-of-experts feed-forward layer (Switch Transformer, Mixtral), a drop-in for `MLP`.

A router scores every token against `n_expert` expert MLPs; each token is sent to its `top_k` best
experts only, and their outputs are mixed with the router's probabilities renormalised over the
chosen ones. Parameters grow with n_expert, but compute per token grows with top_k only: each expert
runs on just the tokens routed to it (a gather), and the results are put back in token order.
"""
from __future__ import annotations

import numpy as np

from nn.linear import Linear
from nn.mlp import MLP
from nn.module import Module
from tinygrad_like import Tensor


class MoE(Module):
    """x (..., dim) -> (..., dim). router Linear(dim, n_expert, bias=False); experts: a list of MLP.

    For each token x (with N tokens in all, flattened to (N, dim)):
        p = softmax(router(x))                  probabilities over ALL experts, (n_expert,)
        S = the top_k experts by p              (a constant choice: no gradient flows through it)
        w_e = p_e / Σ_{j∈S} p_j  for e in S     weights renormalised over the chosen experts
        y = Σ_{e∈S} w_e · expert_e(x)

    After each forward, `expert_counts` (n_expert,) ints holds how many (token, slot) assignments
    each expert received, and `aux_loss` the load-balancing loss of Switch / Mixtral:
        aux_loss = n_expert · Σ_i f_i · P_i
        f_i = expert_counts[i] / N              fraction of tokens sent to expert i (a constant)
        P_i = mean over tokens of p_i           mean router probability (differentiable)
    Minimising it pushes the router towards even use of the experts. Convention for top_k > 1: f counts
    every assignment, so Σ_i f_i = top_k and a perfectly balanced router (f_i = top_k/n, P_i = 1/n)
    gives aux_loss = top_k (= 1 for top-1 routing, as in the Switch paper).
    """

    def __init__(self, dim: int, hidden: int, n_expert: int, top_k: int = 2, activation: str = "gelu",
                 bias: bool = True, dtype="float32"):
        if not 1 <= top_k <= n_expert:
            raise ValueError(f"MoE: top_k must be between 1 and n_expert={n_expert}, got {top_k}")
        self.dim, self.hidden, self.n_expert, self.top_k = dim, hidden, n_expert, top_k
        self.router = Linear(dim, n_expert, bias=False, dtype=dtype)
        self.experts = [MLP(dim, hidden, activation, bias=bias, dtype=dtype) for _ in range(n_expert)]
        self.aux_loss: Tensor | None = None
        self.expert_counts = np.zeros(n_expert, dtype=np.int64)

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim == 0 or x.shape[-1] != self.dim:
            raise ValueError(f"MoE: input of shape {x.shape} must end in dim {self.dim}")
        flat = x.reshape(-1, self.dim)                            # (N, C)
        N, k = flat.shape[0], self.top_k
        probs = self.router(flat).softmax(-1)                     # (N, E)

        # route: the k most probable experts per token, best first (a constant, integer choice)
        chosen = np.argsort(-probs._data, axis=-1, kind="stable")[:, :k]  # (N, k)
        picked = probs[np.arange(N)[:, None], chosen]             # (N, k)
        weights = picked / picked.sum(-1, keepdim=True)           # (N, k), rows sum to 1

        # dispatch: each expert runs only on its own tokens; remember which (token, slot) each row is
        outputs, positions = [], []
        for e, expert in enumerate(self.experts):
            tokens, slots = np.nonzero(chosen == e)               # (n_e,) each
            if tokens.size == 0:
                continue                                          # an idle expert is not run at all
            outputs.append(expert(flat[tokens]))                  # (n_e, C)
            positions.append(tokens * k + slots)                  # row of the (N·k) (token, slot) grid
        # combine: every (token, slot) appears exactly once, so inverting the order is a permutation
        order = np.concatenate(positions)                         # (N·k,)
        inverse = np.empty_like(order)
        inverse[order] = np.arange(order.size)
        per_slot = Tensor.cat(outputs, dim=0)[inverse].reshape(N, k, self.dim)  # (N, k, C)
        y = (per_slot * weights.unsqueeze(-1)).sum(1)             # (N, C)

        self.expert_counts = np.bincount(chosen.reshape(-1), minlength=self.n_expert)
        f = Tensor((self.expert_counts / N).astype(probs.dtype))  # (E,) constant
        self.aux_loss = (f * probs.mean(0)).sum() * self.n_expert
        return y.reshape(x.shape)

    def extra_repr(self) -> str:
        return f"{self.dim}, {self.hidden}, n_expert={self.n_expert}, top_k={self.top_k}"

"""`HealthMonitor`: the statistics that say whether a network is training well, read while it trains.

Every `every` steps it records, per layer (the embeddings, each transformer block h.i, the head):
    act_mean, act_std   of the layer's output (for a block, the residual stream it writes)
    saturated           the fraction of the MLP's units in the region where their activation is flat
                        and passes almost no gradient (SATURATED below)
    grad_norm           ‖g‖ over the layer's parameters (also kept per parameter)
    update_ratio        log10(‖Δw‖ / ‖w‖) over the layer's parameters, Δw the optimizer's whole step
                        (lr · update, weight decay included), w the weights before it
and checks the rules below; a rule that fires prints one line: what it saw and what usually fixes it.

Use it in any loop:
    health = HealthMonitor(model, every=10, vocab_size=V)
    for step in range(steps):
        health.before_forward(step)         # switches the activation hooks on for a recorded step
        logits, loss = model(x, y); loss.backward()
        health.after_backward(step, loss)   # gradient norms, NaN/Inf, keeps w for the update ratio
        clip_grad_norm(...); optimizer.step(); optimizer.zero_grad()
        health.after_step(step)             # update-to-data ratios, then the rules
    health.plot("health.png"); summary["health"] = health.summary()

The rules and where their numbers come from:
  initial loss   loss at the first record more than INIT_LOSS_MARGIN nats above ln(vocab_size). Logits near
                 0 give the uniform distribution, loss ln V; logits of spread σ cost about σ²/2 more
                 (Karpathy, "A recipe for training neural networks", 2019: verify the loss at init).
  update ratio   the median over weight matrices of log10(‖Δw‖/‖w‖) above UPDATE_HIGH or below UPDATE_LOW.
                 Karpathy's makemore lectures (part 3) suggest about -3 for SGD. Adam moves every weight
                 by about lr per step whatever its gradient, so with w ~ 0.02 a healthy lr of 1e-3..3e-3
                 starts near -1 (lr / 0.02) and falls as the moments settle: we flag only what is an
                 order of magnitude beyond that, above -0.5 (steps as large as half the weights) or
                 below -5 (the weights are not moving).
  saturation     more than SATURATION_HIGH of the MLP's units saturated (below): a fifth of the units
                 passing no gradient wastes capacity; at GPT-2's init it is 0.
  grad growth    the total gradient norm more than GROWTH (100x, two orders of magnitude) above its
                 first recorded value: a run diverging before the loss shows it.
  non-finite     a NaN or Inf in the loss, a gradient or a weight, named with the step and the parameter.
"""
from __future__ import annotations

import math

import numpy as np

from nn.block import Block
from nn.mlp import MLP
from nn.module import Module

INIT_LOSS_MARGIN = 0.5    # nats above ln V
UPDATE_HIGH, UPDATE_LOW = -0.5, -5.0
SATURATION_HIGH = 0.2
GROWTH = 100.0

# Where each activation saturates, as a test on its input x (the MLP's pre-activation):
#   gelu:    x < -3   GELU(x) > -0.004 and |GELU'(x)| < 0.012: flat at zero
#   swiglu:  gate < -5   |SiLU'(x)| < 0.03 (SiLU's tail is slower than GELU's)
#   relu:    x <= 0 for every token of the batch: a dead unit (any single token is off half the time)
#   tanh:    |x| > 2   |tanh(x)| > 0.96 and tanh'(x) < 0.08 (makemore part 3 counts |tanh| > 0.97)
SATURATED = {
    "gelu": lambda x: x < -3.0,
    "swiglu": lambda x: x < -5.0,
    "relu": lambda x: np.broadcast_to((x <= 0).reshape(-1, x.shape[-1]).all(0), x.shape),
    "tanh": lambda x: np.abs(x) > 2.0,
}

FIXES = {
    "initial loss": "the output layer starts too confident; scale the init down (GPT-2 uses N(0, 0.02))",
    "update ratio high": "the learning rate is too large; lower it (or warm it up)",
    "update ratio low": "the learning rate is too small, or the gradients vanish; raise it",
    "saturation": "pre-activations too large: a smaller init, a norm before the layer, or a lower lr",
    "grad growth": "the run is diverging: lower the learning rate, clip gradients, check the init",
    "non-finite": "lower the learning rate; look for log(0), division by 0 or float16 overflow",
}


def _layer_of(name: str) -> str:
    """The layer a parameter belongs to: 'h.3' for transformer.h.3..., 'embed' for wte/wpe, 'head' else."""
    parts = name.split(".")
    if "h" in parts and parts.index("h") + 1 < len(parts):
        i = parts.index("h")
        return f"h.{parts[i + 1]}"
    return "embed" if any(p in ("wte", "wpe") for p in parts) else "head"


class HealthMonitor:
    """Records training statistics every `every` steps and checks the rules; see the module docstring.

    model: any Module; blocks (nn.Block) give the per-layer activations and their MLPs (nn.MLP, also inside
    experts) the saturation. vocab_size: for the initial-loss rule (None: skipped). log: where the rule
    lines go (print)."""

    def __init__(self, model: Module, every: int = 10, vocab_size: int | None = None, log=print):
        if every < 1:
            raise ValueError(f"HealthMonitor: every must be >= 1, got {every}")
        self.model, self.every, self.vocab_size, self.log = model, every, vocab_size, log
        self.params = dict(model.named_parameters())
        self.layers = list(dict.fromkeys(_layer_of(n) for n in self.params))
        self.steps, self.loss = [], []
        self.per_layer = {k: {layer: [] for layer in self.layers}
                          for k in ("act_mean", "act_std", "saturated", "grad_norm", "update_ratio")}
        self.per_param = {"grad_norm": {n: [] for n in self.params}, "update_ratio": {n: [] for n in self.params}}
        self.alerts: list[str] = []
        self._fired: set[str] = set()
        self._recording = False
        self._acts: dict[str, list] = {}
        self._before: dict[str, np.ndarray] = {}
        self._first_grad_norm = None
        self._hooks = []
        for name, module in model.named_modules():
            if isinstance(module, Block):
                self._hooks.append(module.register_forward_hook(self._block_hook(_layer_of(name + ".x"))))
            if isinstance(module, MLP):
                self._hooks.append(module.c_fc.register_forward_hook(self._mlp_hook(_layer_of(name + ".x"),
                                                                                    module)))

    # ------------------------------------------------------------ hooks (only active on recorded steps)
    def _block_hook(self, layer):
        def hook(module, args, output):
            if self._recording:
                out = (output[0] if isinstance(output, tuple) else output)._data
                self._acts.setdefault(layer, [None, []])[0] = (float(out.mean()), float(out.std()))
        return hook

    def _mlp_hook(self, layer, mlp):
        def hook(module, args, output):
            if self._recording:
                x = output._data[..., :mlp.hidden] if mlp.activation == "swiglu" else output._data
                self._acts.setdefault(layer, [None, []])[1].append(SATURATED[mlp.activation](x).mean())
        return hook

    def remove(self) -> None:
        """Take the hooks off the model."""
        for h in self._hooks:
            h.remove()

    def due(self, step: int) -> bool:
        return step % self.every == 0

    # ------------------------------------------------------------ the three calls per step
    def before_forward(self, step: int) -> None:
        self._recording = self.due(step)
        self._acts = {}

    def after_backward(self, step: int, loss) -> None:
        loss = float(loss.item() if hasattr(loss, "item") else loss)
        self._check_finite(step, loss)
        if not self.due(step):
            return
        self._recording = False
        self.steps.append(step)
        self.loss.append(loss)
        norms = {n: float(np.linalg.norm(p.grad._data)) if p.grad is not None else 0.0 for n, p in self.params.items()}
        for n, v in norms.items():
            self.per_param["grad_norm"][n].append(v)
        for layer in self.layers:
            sq = sum(v * v for n, v in norms.items() if _layer_of(n) == layer)
            self.per_layer["grad_norm"][layer].append(math.sqrt(sq))
            out, sat = self._acts.get(layer, (None, []))
            self.per_layer["act_mean"][layer].append(out[0] if out is not None else math.nan)
            self.per_layer["act_std"][layer].append(out[1] if out is not None else math.nan)
            self.per_layer["saturated"][layer].append(float(np.mean(sat)) if sat else math.nan)
        self._before = {n: p._data.copy() for n, p in self.params.items()}
        if len(self.steps) == 1 and self.vocab_size:
            excess = loss - math.log(self.vocab_size)
            if excess > INIT_LOSS_MARGIN:
                self._fire("initial loss", step, f"loss {loss:.3f} at step {step} is {excess:.2f} nats above "
                                                 f"ln {self.vocab_size} = {math.log(self.vocab_size):.3f}")
        total = math.sqrt(sum(v * v for v in norms.values()))
        if self._first_grad_norm is None:
            self._first_grad_norm = total
        elif total > GROWTH * self._first_grad_norm > 0:
            first = self._first_grad_norm
            self._fire("grad growth", step, f"gradient norm {total:.3g} at step {step} is {total / first:.0f}x "
                                            f"its first value {first:.3g}")
        worst = max(((v[-1], layer) for layer, v in self.per_layer["saturated"].items() if not math.isnan(v[-1])),
                    default=None)
        if worst is not None and worst[0] > SATURATION_HIGH:
            self._fire("saturation", step, f"{100 * worst[0]:.0f}% of the MLP units of {worst[1]} saturated at step "
                                           f"{step} (above {100 * SATURATION_HIGH:.0f}%)")

    def after_step(self, step: int) -> None:
        if not self._before:
            return
        ratios = {}
        for n, p in self.params.items():
            w = self._before[n]
            ratio = np.linalg.norm(p._data - w) / max(np.linalg.norm(w), 1e-30)
            ratios[n] = math.log10(ratio) if ratio > 0 else -math.inf
            self.per_param["update_ratio"][n].append(ratios[n])
        for layer in self.layers:
            names = [n for n in self.params if _layer_of(n) == layer]
            dw = math.sqrt(sum(float(np.sum((self.params[n]._data - self._before[n]) ** 2)) for n in names))
            w = math.sqrt(sum(float(np.sum(self._before[n] ** 2)) for n in names))
            self.per_layer["update_ratio"][layer].append(math.log10(dw / w) if dw > 0 and w > 0 else -math.inf)
        self._before = {}
        self._check_finite(step, None)
        matrices = [ratios[n] for n, p in self.params.items() if p.ndim >= 2 and np.isfinite(ratios[n])]
        if matrices:
            median = float(np.median(matrices))
            saw = f"median log10(|lr*update|/|w|) over weight matrices {median:.2f} at step {step}"
            if median > UPDATE_HIGH:
                self._fire("update ratio high", step, f"{saw} (above {UPDATE_HIGH}; about -3..-1 is usual)")
            elif median < UPDATE_LOW:
                self._fire("update ratio low", step, f"{saw} (below {UPDATE_LOW})")

    # ------------------------------------------------------------ rules
    def _check_finite(self, step: int, loss: float | None) -> None:
        if "non-finite" in self._fired:
            return
        if loss is not None and not math.isfinite(loss):
            self._fire("non-finite", step, f"loss is {loss} at step {step}")
            return
        for n, p in self.params.items():
            where = "gradient" if loss is not None else "weight"
            array = p._data if loss is None else None if p.grad is None else p.grad._data
            if array is not None and not np.all(np.isfinite(array)):
                self._fire("non-finite", step, f"{where} of {n} holds NaN/Inf at step {step}")
                return

    def _fire(self, rule: str, step: int, saw: str) -> None:
        if rule in self._fired:
            return                                          # each rule speaks once per run
        self._fired.add(rule)
        line = f"health: {rule}: {saw}. Usually: {FIXES[rule]}."
        self.alerts.append(line)
        self.log(line)

    def verdict(self) -> str:
        """One line for the end of a run, so a quiet run reads as checked, not as unwatched:
        "health: 0 rules fired over 20 checks (every 10 steps, 0 to 190)", or the rules that fired."""
        where = f"every {self.every} steps, {self.steps[0]} to {self.steps[-1]}" if self.steps else "no step recorded"
        checks = f"{len(self.steps)} check{'s' if len(self.steps) != 1 else ''} ({where})"
        if not self.alerts:
            return f"health: 0 rules fired over {checks}"
        n = len(self.alerts)
        return f"health: {n} rule{'s' if n > 1 else ''} fired over {checks}: {', '.join(self.fired)} (see above)"

    @property
    def fired(self) -> list[str]:
        """The rules that fired, in order."""
        return [a.split(":")[1].strip() for a in self.alerts]

    # ------------------------------------------------------------ results
    def summary(self) -> dict:
        """JSON-able: the recorded steps, loss, per-layer statistics, per-parameter ones and the alerts."""
        def clean(v):
            return None if not math.isfinite(v) else round(v, 6)
        return dict(every=self.every, steps=self.steps, loss=[clean(v) for v in self.loss], layers=self.layers,
                    per_layer={k: {layer: [clean(v) for v in vals] for layer, vals in d.items()}
                               for k, d in self.per_layer.items()},
                    per_param={k: {n: [clean(v) for v in vals] for n, vals in d.items()}
                               for k, d in self.per_param.items()},
                    alerts=self.alerts, verdict=self.verdict())

    def plot(self, path):
        """health.png: the figure of `figure()`, written to `path`."""
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig = self.figure()
        fig.savefig(path, dpi=110, bbox_inches="tight")
        plt.close(fig)
        return path

    def figure(self):
        """One panel per statistic, one line per layer in the same colour in every panel (one legend for the
        layers, on top), each rule's threshold drawn and named in its panel's legend, below the panel, so no
        legend hides a curve."""
        import matplotlib.pyplot as plt
        titles = dict(act_mean="activation mean (layer output)", act_std="activation std (layer output)",
                      saturated="saturated MLP units (fraction)", grad_norm="gradient norm",
                      update_ratio="update / data: log10(|lr*update| / |w|)")
        colour = {layer: f"C{i}" for i, layer in enumerate(self.layers)}
        fig, axes = plt.subplots(2, 3, figsize=(15, 9), layout="constrained")
        for ax, (key, title) in zip(axes.flat, titles.items()):
            for layer, values in self.per_layer[key].items():
                if not all(math.isnan(v) for v in values):
                    ax.plot(self.steps[:len(values)], values, color=colour[layer])
            ax.set(title=title, xlabel="step")
            if key == "saturated":
                ax.axhline(SATURATION_HIGH, color="red", ls=":", lw=1.2,
                           label=f"rule: more than {SATURATION_HIGH:.0%} saturated")
                ax.set_ylim(-0.01, max(SATURATION_HIGH * 1.2, ax.get_ylim()[1]))
            if key == "grad_norm" and self.steps:
                ax.set_yscale("log")
                grads = self.per_param["grad_norm"].values()
                total = [math.sqrt(sum(v[i] ** 2 for v in grads)) for i in range(len(self.steps))]
                ax.plot(self.steps, total, color="k", lw=1.5, label="all layers together")
                ax.axhline(GROWTH * total[0], color="red", ls=":", lw=1.2,
                           label=f"rule: all layers above {GROWTH:.0f}x their first norm")
            if key == "update_ratio":
                low, high = ax.get_ylim()
                ax.axhline(-3, color="gray", ls="--", lw=1, label="-3: the usual for SGD (Adam starts higher)")
                ax.axhspan(UPDATE_HIGH, max(high, UPDATE_HIGH + 1), color="red", alpha=0.1,
                           label=f"rule: median over matrices above {UPDATE_HIGH}")
                ax.axhspan(min(low, UPDATE_LOW - 1), UPDATE_LOW, color="orange", alpha=0.15,
                           label=f"rule: median over matrices below {UPDATE_LOW}")
        ax = axes.flat[5]
        ax.plot(self.steps, self.loss, color="k", label="loss")
        if self.vocab_size:
            ln_v = math.log(self.vocab_size)
            ax.axhline(ln_v, color="gray", ls="--", lw=1, label=f"ln {self.vocab_size} = {ln_v:.2f}: a uniform guess")
            ax.axhline(ln_v + INIT_LOSS_MARGIN, color="red", ls=":", lw=1.2,
                       label=f"rule: first loss above ln {self.vocab_size} + {INIT_LOSS_MARGIN}")
        ax.set(title="loss (recorded steps)", xlabel="step")
        for ax in axes.flat:
            if ax.get_legend_handles_labels()[0]:
                ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), fontsize=8, frameon=False)
        layers = [plt.Line2D([], [], color=colour[layer]) for layer in self.layers]
        fig.legend(layers, self.layers, loc="outside upper center", ncol=len(self.layers), title="layer",
                   fontsize=9, title_fontsize=9)
        if self.alerts:
            import textwrap
            lines = [line for a in self.alerts for line in textwrap.wrap(a, 190, subsequent_indent="    ")]
            fig.text(0.02, -0.01, "\n".join(lines), ha="left", va="top", fontsize=8, color="firebrick")
        return fig

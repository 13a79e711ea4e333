"""Hand a model trained by train_gpt.py over to Hugging Face: write RUN/hf/, a directory transformers loads.

    python demos/export_hf.py out/train_gpt              # writes out/train_gpt/hf/
    python demos/export_hf.py out/train_gpt --out DIR --overwrite

RUN/hf/ holds config.json + model.safetensors + generation_config.json (GPT.save_pretrained: a
GPT-2, Llama or Mixtral directory, whichever class computes exactly what this model computes),
tokenizer.json + tokenizer_config.json (the tokenizer, encoding to the same ids), and README.md, a
model card with the config, the data, the losses and the command that trained the model. Then:

    from transformers import AutoModelForCausalLM, AutoTokenizer
    model = AutoModelForCausalLM.from_pretrained("out/train_gpt/hf")
    tok = AutoTokenizer.from_pretrained("out/train_gpt/hf")

This script itself needs neither torch nor transformers: it only writes files. A config with no exact
counterpart in transformers (post-norm, RoPE with LayerNorm, ...) stops with the field that blocks it.
"""
from __future__ import annotations

import json
import pathlib
import shlex

import _common
from models.gpt import GPT
from sample import load_model

FLAGS_OFF = {"bias": "--no-bias", "prenorm": "--postnorm", "tie_weights": "--untied"}  # store_const False flags


def build_parser():
    p = _common.ArgumentParser(prog="python demos/export_hf.py", description=__doc__.splitlines()[0],
                               formatter_class=_common.HelpFormatter)
    p.add_argument("run", help="a train_gpt.py output folder (ckpt.safetensors, config.json, tokenizer.json)")
    p.add_argument("--out", default=None, help="where to write (default RUN/hf)")
    p.add_argument("--overwrite", action="store_true", help="replace a non-empty --out folder")
    return p


def train_command(settings: dict) -> str:
    """The train_gpt.py command line that gives `settings`: the preset, then every setting that differs
    from what the preset alone gives (checked by parsing the command back)."""
    import training_run

    def resolve(args):
        return training_run.resolve_settings(training_run.build_parser().parse_args(args))[0]

    def flags(keys, given):
        args, now = [], resolve(given)
        for key in keys:
            value = settings[key]
            if key == "preset" or now.get(key) == value:
                continue
            if key in FLAGS_OFF and value is False:
                args.append(FLAGS_OFF[key])
            elif key == "prompt":
                for prompt in value:
                    args += ["--prompt", prompt]
            else:
                args += ["--" + key.replace("_", "-"), str(value)]
        return args

    derived = ("min_lr", "warmup", "ckpt_interval")              # follow from lr, steps, eval_interval
    args = ["--preset", settings["preset"]] if settings["preset"] != training_run.DEFAULTS["preset"] else []
    args += flags([k for k in settings if k not in derived], args)
    args += flags(derived, args)
    again = resolve(args)
    if again != settings:
        differ = sorted(k for k in settings if again.get(k) != settings[k])
        raise ValueError(f"export_hf: cannot rebuild the train_gpt.py command ({differ})")
    return shlex.join(["python", "demos/train_gpt.py", *args])


def model_card(model: GPT, run: pathlib.Path, family_class: str) -> str:
    """README.md for the hub: what the model is, how it was made, how well it does, how to load it."""
    saved = json.loads((run / "config.json").read_text())
    settings, data = saved["settings"], saved["data"]
    summary_file = run / "summary.json"
    summary = json.loads(summary_file.read_text()) if summary_file.is_file() else None
    c = model.config
    rows = "\n".join(f"| `{k}` | `{v!r}` |" for k, v in c.to_dict().items())
    if summary:
        losses = (f"After {summary['steps']} steps: train loss **{summary['train_loss']:.4f}**, validation loss "
                  f"**{summary['val_loss']:.4f}** nats/token ({summary['val_loss_per_char']:.4f} per character); "
                  f"the unigram baseline (token frequencies alone) is {summary['unigram_val_loss']:.4f}. "
                  f"Training took {summary['train_time_s']:.0f} s on a CPU.")
    else:
        losses = "The run has no summary.json yet (it was interrupted); these are the weights of its last checkpoint."
    return f"""---
library_name: transformers
pipeline_tag: text-generation
tags: [tinygrad_like, {c.pos}-positions, {c.norm}]
---

# A small GPT trained with tinygrad_like

{model.num_params():,} parameters, trained from scratch on a CPU by `demos/train_gpt.py` of
tinygrad_like (a tensor autograd engine on numpy), exported with `demos/export_hf.py` as a
`{family_class}`: transformers computes the same logits (float32: to 1e-5 relative; the tests in
`tests/test_hf_export.py` check it) and the tokenizer gives the same ids.

## Data

`{data['source']}` (sha256 `{data['sha256'][:16]}...`): the first 90% of the characters for training, the
last 10% for validation. Tokenizer: {settings['tokenizer']}, {c.vocab_size} ids.

## Losses

{losses}

## The command that made it

```
{train_command(settings)}
python demos/export_hf.py {run}
```

## Load it, generate, continue training

```python
from transformers import AutoModelForCausalLM, AutoTokenizer
model = AutoModelForCausalLM.from_pretrained("{run / 'hf'}")
tok = AutoTokenizer.from_pretrained("{run / 'hf'}")
ids = tok("def", return_tensors="pt").input_ids
print(tok.decode(model.generate(ids, max_new_tokens=60, do_sample=False)[0]))
```

`python demos/continue_in_torch.py {run}` runs AdamW steps on it in PyTorch, on the same data.

## Config (tinygrad_like's GPTConfig)

| field | value |
|---|---|
{rows}
"""


def main(argv=None) -> pathlib.Path:
    p = build_parser()
    args = p.parse_args(argv)
    run = pathlib.Path(args.run)
    try:
        model, tokenizer = load_model(run)
    except _common.UsageError as e:
        p.error(str(e))
    out = pathlib.Path(args.out) if args.out else run / "hf"
    from models import hf_export
    try:
        family = hf_export.hf_family(model.config)
    except ValueError as e:
        p.error(str(e))
    try:
        model.save_pretrained(out, overwrite=args.overwrite, tokenizer=tokenizer,
                              readme=model_card(model, run, hf_export.ARCHITECTURES[family]))
    except (FileExistsError, ValueError) as e:
        p.error(str(e))
    for f in sorted(out.iterdir()):
        print(f"  wrote {f}")
    print(f"done: a {hf_export.ARCHITECTURES[family]} in {out}; load it with "
          f"AutoModelForCausalLM.from_pretrained({str(out)!r})")
    return out


if __name__ == "__main__":
    main()

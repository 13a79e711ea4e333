"""Real PyTorch programs, unchanged, on PyTorch and on the engine through `python -m tinygrad_like.torch`.

    python benchmarks/real_programs.py [--rounds 2] [--quick] [--only makemore] [--scratch DIR]

The programs are public checkouts this repository never holds: nanoGPT, minGPT and makemore, found
through --nanogpt/--mingpt/--makemore or NANOGPT_DIR, MINGPT_DIR, MAKEMORE_DIR (default: /work/programs/<name>),
and tiny-shakespeare's input.txt through --shakespeare or SHAKESPEARE_TXT. Each side (PyTorch, ours) gets
its own copy of each program under the scratch directory (default: a temporary one, removed at the end),
so a checkpoint one side writes is read by that side's sample run only. The data is prepared offline
by the program's own script (nanoGPT's data/shakespeare_char/prepare.py finds input.txt already there;
makemore ships names.txt). A module a program imports but never uses offline and that is not installed
(`requests` in prepare.py, `tiktoken` in sample.py) is replaced by a stub on the path of both sides
that raises if it is used.

The twelve runs of issue 26, with the command-line arguments each program accepts and nothing else:
nanoGPT's train.py (small, 30 iterations, the config's own dropout) and sample.py; minGPT's chargpt (gpt-nano)
and adder, each capped by its own --trainer.max_iters, and the README's sort example (demo.ipynb), run by a
driver written here that uses minGPT's API as the README does (its GPT and Trainer; the dataset is ours);
makemore with each --type, then --sample-only on the trained transformer.

Per run and side: whether it ran to the end, or its first error (type, message, and the program's own
file and line, the innermost frame of the traceback inside the program's copy); the loss at a fixed
step as the program prints it; and ms per iteration as the program itself times it (the median of the
iterations it prints), or the wall time of runs without iterations (sampling). With --rounds N
each run goes N times per side, the sides alternated (PyTorch first in odd rounds, ours first in even
ones); --quick runs each once, for finding what breaks. Run as a command, it writes
benchmarks/results/real_programs.json (benchmarks/record.py, with the machine line) after each round, so a
run cut short keeps the rounds it finished; benchmarks/report.py turns it into the table in docs/performance.md.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT)]
import record  # noqa: E402
from machine import load_average, machine_line, torch_available  # noqa: E402

SIDES = ("torch", "ours")
TIMEOUT_S = 1800

# A stub for a module a program imports at the top but does not call offline; calling it says so.
STUB = '''"""Stub written by tinygrad_like's benchmarks/real_programs.py: {name} is not installed, and the program
does not need it offline. Using it raises."""


def __getattr__(attr):
    raise RuntimeError("real_programs.py: {name} is not installed (a stub stands in for it offline); "
                       "the program asked for {name}." + attr)
'''

# The README's sort example (minGPT's README and demo.ipynb): a GPT learns to sort six digits in 0..2.
# The dataset is ours; the model and the training loop are minGPT's, used through its API as the README shows.
SORT_DRIVER = '''"""Sorting six digits with minGPT's GPT and Trainer, as its README describes (real_programs.py)."""
import sys

import torch
from torch.utils.data import Dataset

from mingpt.model import GPT
from mingpt.trainer import Trainer
from mingpt.utils import set_seed

LENGTH, DIGITS = 6, 3


class Sorting(Dataset):
    """Example: x = the digits then their sorted order, minus the last; y = x shifted by one, -1 (ignored)
    where the model is still reading the digits."""

    def __len__(self):
        return 10000

    def __getitem__(self, index):
        digits = torch.randint(DIGITS, size=(LENGTH,), dtype=torch.long)
        both = torch.cat((digits, torch.sort(digits)[0]))
        x, y = both[:-1].clone(), both[1:].clone()
        y[:LENGTH - 1] = -1
        return x, y


set_seed(3407)
config = GPT.get_default_config()
config.model_type, config.vocab_size, config.block_size = "gpt-nano", DIGITS, 2 * LENGTH - 1
model = GPT(config)
train = Trainer.get_default_config()
train.learning_rate, train.max_iters, train.num_workers = 5e-4, int(sys.argv[1]), 0
trainer = Trainer(train, model, Sorting())


def log(trainer):
    if trainer.iter_num % 10 == 0:
        print(f"iter_dt {trainer.iter_dt * 1000:.2f}ms; iter {trainer.iter_num}: train loss {trainer.loss.item():.5f}")


trainer.set_callback("on_batch_end", log)
trainer.run()
model.eval()
with torch.no_grad():
    digits = torch.randint(DIGITS, size=(200, LENGTH), dtype=torch.long)
    out = model.generate(digits, LENGTH, do_sample=False)[:, LENGTH:]
    right = (out == torch.sort(digits, dim=1)[0]).all(1).float().mean().item()
print(f"sorted correctly: {right:.2%}")
'''


@dataclass
class Run:
    """One program run: where (program, folder inside the copy), what (script and arguments), and how to read
    its output (a regex for the loss at the fixed step, one for its per-iteration times in ms)."""
    name: str
    program: str
    folder: str
    script: str
    args: list[str]
    loss: str | None = None          # regex: group 1 the fixed step's loss (the last match wins)
    step_ms: str | None = None       # regex: group 1 one iteration's ms
    loss_label: str = ""
    after: list[str] = field(default_factory=list)   # runs of the same side that must come first


def runs(quick_steps: bool = False) -> list[Run]:
    it = 31 if not quick_steps else 21             # minGPT iterations (losses printed every 10)
    mm = 501 if not quick_steps else 21            # makemore steps (evaluated and saved at step 500)
    nano = ["config/train_shakespeare_char.py", "--device=cpu", "--compile=False", "--eval_iters=5",
            "--eval_interval=30", "--log_interval=1", "--block_size=64", "--batch_size=12", "--n_layer=2",
            "--n_head=4", "--n_embd=128", "--max_iters=30", "--lr_decay_iters=30"]
    out = [Run("nanoGPT train", "nanoGPT", ".", "train.py", nano, r"step 30: train loss [\d.]+, val loss ([\d.]+)",
               r"iter \d+: loss [\d.]+, time ([\d.]+)ms", "val loss at step 30"),
           Run("nanoGPT sample", "nanoGPT", ".", "sample.py", ["--out_dir=out-shakespeare-char", "--device=cpu",
               "--num_samples=1", "--max_new_tokens=50"], after=["nanoGPT train"]),
           Run("minGPT chargpt", "minGPT", "projects/chargpt", "chargpt.py",
               ["--model.model_type=gpt-nano", f"--trainer.max_iters={it}"],
               r"iter \d+: train loss ([\d.]+)", r"iter_dt ([\d.]+)ms", f"train loss at iter {it - 1}"),
           Run("minGPT adder", "minGPT", "projects/adder", "adder.py", [f"--trainer.max_iters={it}"],
               r"iter \d+: train loss ([\d.]+)", r"iter_dt ([\d.]+)ms", f"train loss at iter {it - 1}"),
           Run("minGPT sort (README)", "minGPT", ".", "sort_driver.py", [str(it)],
               r"iter \d+: train loss ([\d.]+)", r"iter_dt ([\d.]+)ms", f"train loss at iter {it - 1}")]
    for kind in ("bigram", "mlp", "rnn", "gru", "bow", "transformer"):
        mm = 501 if kind == "transformer" else mm  # sample-only reads the model saved at step 500
        loss, label = ((r"step 500 train loss: [\d.]+ test loss: ([\d.]+)", "test loss at step 500") if mm > 500
                       else (r"step \d+ \| loss ([\d.]+)", f"train loss at step {mm - 1}"))
        out.append(Run(f"makemore {kind}", "makemore", ".", "makemore.py",
                       ["-i", "names.txt", "-o", f"out-{kind}", "--type", kind, "--max-steps", str(mm)],
                       loss, r"step \d+ \| loss [\d.]+ \| step time ([\d.]+)ms", label))
    out.append(Run("makemore sample-only", "makemore", ".", "makemore.py",
                   ["-i", "names.txt", "-o", "out-transformer", "--type", "transformer", "--sample-only"],
                   after=["makemore transformer"]))
    return out


# ---------------------------------------------------------------- copies, data, stubs

def prepare(side_dir: Path, sources: dict, shakespeare: Path) -> dict:
    """Copy each program under side_dir, stub what is missing, prepare nanoGPT's data with its own script.
    Returns {"stubs": [...], "prepare": what prepare.py printed last}."""
    side_dir.mkdir(parents=True, exist_ok=True)
    for name, src in sources.items():
        shutil.copytree(src, side_dir / name, ignore=shutil.ignore_patterns(".git", "out*", "__pycache__"))
    data = side_dir / "nanoGPT" / "data" / "shakespeare_char"
    shutil.copy(shakespeare, data / "input.txt")
    shutil.copy(shakespeare, side_dir / "minGPT" / "projects" / "chargpt" / "input.txt")
    (side_dir / "minGPT" / "sort_driver.py").write_text(SORT_DRIVER)
    stubs_dir = side_dir / "stubs"
    stubs_dir.mkdir()
    stubs = []
    for module in ("requests", "tiktoken"):
        if subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True).returncode:
            (stubs_dir / f"{module}.py").write_text(STUB.format(name=module))
            stubs.append(module)
    out = subprocess.run([sys.executable, "prepare.py"], cwd=data, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(stubs_dir)})
    if out.returncode:
        raise RuntimeError(f"nanoGPT's prepare.py failed:\n{out.stderr[-2000:]}")
    return {"stubs": stubs, "prepare": out.stdout.strip().splitlines()[-1]}


# ---------------------------------------------------------------- one run

TRACE_FRAME = re.compile(r'^  File "([^"]+)", line (\d+), in (\S+)\n    (.*)$', re.M)
ERROR_LINE = re.compile(r"^(\w[\w.]*(?:Error|Exception|Interrupt|Exit|Warning|NotInEngine)\w*)(?:: (.*))?$", re.M)


def first_error(stderr: str, program_dir: Path, cwd: Path) -> dict:
    """The traceback's error (type, message) and the innermost frame inside the program's copy (its file,
    relative to the copy, the line number and the line)."""
    errors = ERROR_LINE.findall(stderr)
    kind, message = errors[-1] if errors else ("?", stderr.strip().splitlines()[-1][:300] if stderr.strip() else "")
    where = None
    for path, line, _, text in TRACE_FRAME.findall(stderr):
        path = (cwd / path).resolve()  # a script run by its relative name shows that name
        if path.is_relative_to(program_dir.resolve()):
            where = {"file": str(path.relative_to(program_dir.resolve())), "line": int(line),
                     "code": text.strip()}
    return {"type": kind.rsplit(".", 1)[-1], "message": message[:400], "where": where}


def run_once(run: Run, side: str, side_dir: Path, env: dict) -> dict:
    program_dir = side_dir / run.program
    cwd = program_dir / run.folder
    prefix = [sys.executable] if side == "torch" else [sys.executable, "-m", "tinygrad_like.torch"]
    path = [str(side_dir / "stubs"), str(program_dir)] + ([str(ROOT)] if side == "ours" else [])
    start = time.perf_counter()
    try:
        out = subprocess.run(prefix + [run.script, *run.args], cwd=cwd, capture_output=True, text=True,
                             timeout=TIMEOUT_S, env={**env, "PYTHONPATH": os.pathsep.join(path)})
        stdout, stderr, code = out.stdout, out.stderr, out.returncode
    except subprocess.TimeoutExpired as e:
        stdout, stderr, code = (e.stdout or b"").decode(), f"Timeout: no end after {TIMEOUT_S} s", -1
    wall = time.perf_counter() - start
    result = {"ran": code == 0, "wall_s": round(wall, 2)}
    if code:
        result["error"] = first_error(stderr, program_dir, cwd)
    if run.loss:
        losses = re.findall(run.loss, stdout)
        result["loss"] = float(losses[-1]) if losses else None
    if run.step_ms:
        times = [float(t) for t in re.findall(run.step_ms, stdout)]
        result["ms_per_iter"] = round(statistics.median(times[1:] or times), 2) if times else None
        result["iters_timed"] = max(len(times) - 1, len(times) and 1)
    result["tail"] = stdout.strip().splitlines()[-1][:200] if stdout.strip() else ""
    return result


def summarise(results: list[dict]) -> dict:
    """One side's rounds: the first round's outcome and loss, the median of the rounds' ms and wall times."""
    first = dict(results[0])
    ms = [r["ms_per_iter"] for r in results if r.get("ms_per_iter")]
    if ms:
        first["ms_per_iter"], first["ms_rounds"] = round(statistics.median(ms), 2), ms
    first["wall_s"] = round(statistics.median(r["wall_s"] for r in results), 2)
    first["ran"] = all(r["ran"] for r in results)
    return first


def summary(todo: list[Run], sides: list[str], results: dict, rounds: int, setup: dict, sources: dict) -> dict:
    """What the results file records: per run its command and each side's summary over the rounds run so far."""
    programs = {}
    for run in todo:
        done = {side: results[run.name][side] for side in sides if results[run.name][side]}
        programs[run.name] = {"command": " ".join([run.script, *run.args]), "folder": f"{run.program}/{run.folder}",
                              "loss_label": run.loss_label, **{side: summarise(r) for side, r in done.items()}}
    return {"programs": programs, "rounds": rounds, "stubs": setup.get("stubs", []),
            "sources": {k: str(v) for k, v in sources.items()}}


def main(argv=None, after_round=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for name in ("nanoGPT", "minGPT", "makemore"):
        ap.add_argument(f"--{name.lower()}", type=Path, default=Path(os.environ.get(f"{name.upper()}_DIR",
                                                                                     f"/work/programs/{name}")))
    ap.add_argument("--shakespeare", type=Path, default=Path(os.environ.get(
        "SHAKESPEARE_TXT", "/work/programs/char-rnn/data/tinyshakespeare/input.txt")))
    ap.add_argument("--rounds", type=int, default=2, help="runs per side, alternated (default 2)")
    ap.add_argument("--quick", action="store_true", help="one run per side and few iterations (the transformer "
                    "of makemore keeps its 501 steps, for sample-only); records nothing")
    ap.add_argument("--only", default="", help="only the runs whose name contains this (and the runs they need)")
    ap.add_argument("--sides", default=",".join(SIDES), help="torch,ours (default both; torch needs PyTorch)")
    ap.add_argument("--scratch", type=Path, help="keep the copies here (default: a temporary directory)")
    args = ap.parse_args(argv)
    sources = {"nanoGPT": args.nanogpt, "minGPT": args.mingpt, "makemore": args.makemore}
    for name, src in [*sources.items(), ("tiny-shakespeare", args.shakespeare)]:
        if not src.exists():
            raise SystemExit(f"real_programs: no {name} at {src} (pass its path or set the environment variable)")
    sides = [s for s in args.sides.split(",") if s in SIDES]
    if "torch" in sides and not torch_available():
        print("PyTorch is not installed: running our side only")
        sides.remove("torch")
    rounds = 1 if args.quick else args.rounds
    todo = runs(quick_steps=args.quick)
    if args.only:
        wanted = {r.name for r in todo if args.only in r.name}
        wanted |= {a for r in todo if r.name in wanted for a in r.after}
        todo = [r for r in todo if r.name in wanted]
    print(machine_line(), flush=True)
    scratch = args.scratch or Path(tempfile.mkdtemp(prefix="real_programs."))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    try:
        setup = {}
        results = {r.name: {s: [] for s in sides} for r in todo}
        for k in range(rounds):
            order = sides if k % 2 == 0 else sides[::-1]
            for side in order:
                side_dir = scratch / f"round{k}-{side}"
                setup = prepare(side_dir, sources, args.shakespeare)
                for run in todo:
                    res = run_once(run, side, side_dir, env)
                    results[run.name][side].append(res)
                    err = res.get("error")
                    print(f"round {k + 1} {side:5s} {run.name:22s} " + (
                        f"ran, loss {res.get('loss')}, {res.get('ms_per_iter')} ms/iter, {res['wall_s']} s"
                        if res["ran"] else f"STOPPED {err['type']}: {err['message'][:160]} at {err['where']}")
                        + f" (load {load_average()})", flush=True)
            if after_round is not None:                  # a run cut short keeps the rounds it finished
                after_round(summary(todo, sides, results, k + 1, setup, sources))
        return summary(todo, sides, results, rounds, setup, sources)
    finally:
        if not args.scratch:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    recording = "--quick" not in sys.argv and "--only" not in " ".join(sys.argv)
    main(after_round=(lambda result: record.save("real_programs", {"": result})) if recording else None)

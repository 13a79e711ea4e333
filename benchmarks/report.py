"""Write the performance tables of docs/performance.md, and the README's summary of them, from the
benchmarks' results files.

    python benchmarks/report.py            # rewrite every generated part of docs/performance.md and README.md
    python benchmarks/report.py --check    # exit status 1 if either differs from what the files give

Each generated part sits between two marker comments naming a benchmark, `<!-- report:bench_train -->`
and `<!-- /report:bench_train -->`, and is rendered from benchmarks/results/bench_train.json (written by
`python benchmarks/bench_train.py`, see benchmarks/record.py): the command, the date, the machine line
with its load, and the figures. The README's `<!-- report:summary -->` part takes a few headline rows
from several files. Text outside the markers is left as it is. tests/test_report.py checks that both
pages match the files.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]

import record  # noqa: E402
from bench_kernels import SHAPES  # noqa: E402
from bench_train import CONFIGS  # noqa: E402

README = HERE.parent / "README.md"
PERFORMANCE = HERE.parent / "docs" / "performance.md"
PAGES = (PERFORMANCE, README)  # the full tables; the front page's summary of them
BLOCK = re.compile(r"(<!-- report:(\w+) -->\n)(.*?)(<!-- /report:\2 -->)", re.S)


# ---------------------------------------------------------------- number formats

def ms(x: float) -> str:
    """Milliseconds to about four significant figures: 2.81, 188.7, 1695."""
    return f"{x:.2f}" if x < 100 else f"{x:.1f}" if x < 1000 else f"{x:.0f}"


def ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}" if a and b else "-"


def header(data: dict) -> str:
    """The command, its date, and the machine line it ran on, with a warning when the cores were shared."""
    load, cores = data["load"], data["cores"]
    busy = (f" The load average was {load:.2f} on {cores} cores: other processes shared the machine, so "
            "these figures are slower and noisier than the machine is." if load is not None and load > cores / 2
            else "")
    return (f"`{data['command']}` on {data['date'][:10]} (`benchmarks/results/{data['benchmark']}.json`).{busy}\n\n"
            f"```\n{data['machine']}\n```\n")


def table(head: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows]) + "\n"


# ---------------------------------------------------------------- one renderer per benchmark

def bench_train(data: dict) -> str:
    """ms per training step of each config, ours next to PyTorch's two attentions, per thread setting."""
    rows = []
    for i, summary in enumerate(data["runs"].values()):
        for name, row in summary.items():
            cfg, ours = CONFIGS[name], row["ours"]
            label = (f"{name} ({cfg['n_layer']} layers, {cfg['n_embd']} wide, batch {cfg['batch']}×{cfg['block_size']})"
                     if i == 0 else name)
            pool, blas = ours["threads"].split(", BLAS ")
            threads = pool if pool == "1" else f"{pool} (BLAS {blas})"
            explicit, fused = row.get("torch-explicit", {}).get("ms"), row.get("torch-fused", {}).get("ms")
            rss = row.get("torch-fused", {}).get("maxrss_mb")
            rows.append([label, threads, f"{ms(ours['ms'])} ({ms(ours['spread'][0])}-{ms(ours['spread'][1])})",
                         ms(explicit) if explicit else "-", ms(fused) if fused else "-",
                         ratio(ours["ms"], explicit), ratio(ours["ms"], fused),
                         f"{ours['maxrss_mb']:.0f} / {rss:.0f} MB" if rss else f"{ours['maxrss_mb']:.0f} MB / -"])
    return header(data) + "\n" + table(
        ["config", "threads", "ours (spread)", "PyTorch explicit", "PyTorch fused", "ours / explicit",
         "ours / fused", "peak RSS ours / PyTorch fused"], rows)


def bench_train_defaults(data: dict) -> str:
    """ms per training step with each library's defaults (a learner's own loop, nothing set), ours as
    train_gpt.py sets it up, and the ratios to PyTorch's defaults."""
    (label, summary), = data["runs"].items()
    rows = []
    for name, row in summary.items():
        ours, as_train, torch = row["ours defaults"], row["ours as train_gpt"], row.get("torch-fused defaults")
        rows.append([name, f"{ms(ours['ms'])} ({ms(ours['spread'][0])}-{ms(ours['spread'][1])})",
                     ms(as_train["ms"]), ms(torch["ms"]) if torch else "-", ratio(ours["ms"], as_train["ms"]),
                     ratio(ours["ms"], torch["ms"] if torch else None)])
    return header(data) + f"\nOurs {label}; ms per step:\n\n" + table(
        ["config", "ours, defaults (spread)", "ours as train_gpt.py", "PyTorch fused, defaults",
         "defaults / train_gpt.py", "ours / PyTorch"], rows)


def bench_revisions(data: dict) -> str:
    """Two revisions of the engine alternated: ms per step per config and thread count, the 2x2 add."""
    (_, rows), = data["runs"].items()
    labels = [k for k in next(iter(rows.values())) if k.startswith(("before", "after"))]
    body = [[name] + [f"{row[k]:.2f}" for k in labels] + [f"{row['ratio']:.3f}"] for name, row in rows.items()]
    return header(data) + "\n" + table(["measurement", *labels, "after / before"], body)


OP_LABELS = {
    "attention": "attention from packed qkv, causal, B=16, 4 heads, T=128, hs=32",
    "gelu": "GELU (tanh), (16, 128, 512)",
    "exact gelu": "GELU (exact, erf), (16, 128, 512)",
    "layernorm": "LayerNorm with weight and bias, (16, 128, 128)",
    "softmax": "softmax, (16, 4, 128, 128)",
    "cross-entropy": "cross-entropy, 2048 rows × 1024 classes",
    "linear": "Linear (16, 128, 128) → 512",
    "block products": "a block's four Linears (128 → 384, 128, 512; 512 → 128), rows 16 × 128",
}


def bench_ops(data: dict) -> str:
    """The per-op overhead, then each hot op next to PyTorch and the numpy floor; a second run's
    figures (one thread, CPU time) in brackets."""
    runs = list(data["runs"].values())
    main, other = runs[0], (runs[1] if len(runs) > 1 else None)

    def both(fmt, get):
        first = fmt(get(main))
        second = get(other) if other else None
        return f"{first} ({fmt(second)})" if second is not None else first

    add, matmul = main["2x2 add"], main["256x256 matmul"]
    text = (f"One 2×2 add forward+backward: {add[0]:.1f} µs (numpy's add and two copies: {add[1]:.1f} µs, "
            f"{add[0] / add[1]:.1f}x); a 256×256 matmul forward+backward: {matmul[0] / 1e3:.2f} ms (numpy's three "
            f"products: {matmul[1] / 1e3:.2f} ms).\n\n")
    rows = []
    for name in [name for name in OP_LABELS if name in main["hot ops"]]:   # results of before a row was added lack it
        def cell(key, name=name):
            return lambda r: r["hot ops"][name][key]
        rows.append([OP_LABELS[name], both(ms, cell("ours_ms")),
                     both(lambda v: ms(v) if v else "-", cell("torch_ms")),
                     both(lambda v: v, lambda r, name=name: ratio(r["hot ops"][name]["ours_ms"],
                                                                  r["hot ops"][name]["torch_ms"])),
                     f"{main['hot ops'][name]['ours_ms'] / main['hot ops'][name]['floor_ms']:.0f}"])
    attention = main["hot ops"]["attention"]
    text += table(["op, shape", "ours", "PyTorch", "ours / PyTorch", "ours / numpy floor"], rows)
    flop_ms = attention["flop_ms"]
    text += (f"\nAttention's six products at numpy's float32 matmul peak ({attention['gflops']:.0f} GFLOP/s) would "
             f"take {flop_ms:.2f} ms: ours takes {attention['ours_ms'] / flop_ms:.1f}x that.\n")
    return header(data) + "\n" + text


KERNEL_KINDS = {"numpy": "numpy bodies", "fast": "with the fast extra", "numba": "numba kernel", "c": "C kernel",
                "torch": "PyTorch"}


def bench_kernels(data: dict) -> str:
    """Each elementwise op forward+backward: the numpy bodies, with the fast extra, each kernel alone, PyTorch;
    one table per setting (every core in wall time, one thread in CPU time)."""
    text = ""
    for label, summary in data["runs"].items():
        kinds = [k for k in KERNEL_KINDS if any(k in row for row in summary.values())]
        rows = [[f"{op.replace('_', '-')} {SHAPES.get(op, '')}", *(ms(row[k]) if row.get(k) else "-" for k in kinds),
                 ratio(row.get("fast"), row.get("torch"))] for op, row in summary.items()]
        text += f"\n{label}, ms:\n\n" + table(["op", *(KERNEL_KINDS[k] for k in kinds), "fast / PyTorch"], rows)
    return header(data) + text


def bench_threads(data: dict) -> str:
    """Each kind of work on 1 and 2 threads, its share of a 1-thread step, and Amdahl's estimates."""
    r = next(iter(data["runs"].values()))
    gains, split, paper = r["speedups"], r["split"], r["on_paper"]
    total = sum(split.values())

    def share(*kinds):
        return f"{sum(split.get(k, 0.0) for k in kinds) / total:.0%}"
    on_pool = "one-pass kernels on the pool" if r.get("kernels") else "numpy; GELU's pieces on the pool"
    labels = [("matmul", "a block's four products on the pool (`pool.matmul`)", share("matmul") + " (all products)"),
              ("matmul on BLAS threads", "the same on BLAS's own threads, for comparison", ""),
              ("attention", "attention (`MultiHeadAttention`, chunks on the pool)", share("attention")),
              ("elementwise", f"GELU, LayerNorm, cross-entropy ({on_pool})",
               share("elementwise") + " (all elementwise ops)"),
              ("optimizer", "AdamW's step over the model's parameters", share("optimizer"))]
    rows = [[label, f"{gains[k][0]:.1f} ms", f"{gains[k][1]:.1f} ms", f"{gains[k][0] / gains[k][1]:.2f}", s]
            for k, label, s in labels if k in gains]
    rows.append(["the rest: Python between ops, embeddings", "", "", "", share("other")])
    cores = max(int(n) for n in paper)
    text = (f"\nBy Amdahl's law, with every kind at the efficiency measured at 2 threads and the rest on one "
            f"thread, a step would run {paper['2']:.2f}x faster on 2 threads and {paper[str(cores)]:.2f}x on {cores}")
    serial = r.get("on_paper_serial_elementwise")
    if serial:
        text += (f"; with the elementwise ops and the optimizer on one thread (numpy's bodies), {serial['2']:.2f}x "
                 f"and {serial[str(cores)]:.2f}x")
    return header(data) + "\n" + table(
        ["work (forward+backward, small config's shapes)", "1 thread", "2 threads", "speedup",
         "share of a 1-thread step"], rows) + text + ".\n"


def bench_generate(data: dict) -> str:
    """ms per generated token with and without the KV cache, per context length."""
    rows = [[str(r["context"]), f"{r['no_cache_ms']:.2f}", f"{r['cache_ms']:.2f}",
             f"{r['no_cache_ms'] / r['cache_ms']:.1f}x"] for r in next(iter(data["runs"].values()))]
    return header(data) + "\n" + table(["context", "no cache, ms/token", "KV cache, ms/token", "speed-up"], rows)


def train_gpt_torch(data: dict) -> str:
    """The main job's default run and PyTorch's, same model, weights and batches."""
    ours, theirs = data["runs"]["tinygrad_like"], data["runs"]["PyTorch"]
    rows = [["wall time", f"{ours['wall_time_s']:.0f} s", f"{theirs['wall_time_s']:.0f} s"],
            ["training steps", f"{ours['train_time_s']:.0f} s", f"{theirs['train_time_s']:.0f} s"],
            ["tokens/s (training steps)", f"{ours['tokens_per_sec']:,.0f}", f"{theirs['tokens_per_sec']:,.0f}"],
            ["train loss", f"{ours['train_loss']:.4f}", f"{theirs['train_loss']:.4f}"],
            ["validation loss", f"{ours['val_loss']:.4f}", f"{theirs['val_loss']:.4f}"]]
    return header(data) + "\n" + table(["", "tinygrad_like", theirs["engine"]], rows) + (
        f"\nThe unigram baseline's validation loss is {ours['unigram_val_loss']:.4f}.\n")


def bench_facade(data: dict) -> str:
    """ms per training step of the PyTorch-style GPT script on PyTorch and on the engine through the facade."""
    r = next(iter(data["runs"].values()))
    threads = f"{r['threads']} thread(s) each" if r["threads"] else "each framework's default threads"
    rows = [["median of the rounds", ms(r["median_torch_ms"]), ms(r["median_engine_ms"]), f"{r['ratio']:.2f}"],
            ["fastest round", ms(r["fastest_torch_ms"]), ms(r["fastest_engine_ms"]),
             ratio(r["fastest_engine_ms"], r["fastest_torch_ms"])]]
    return header(data) + (f"\n{r['rounds']} rounds of {r['steps']} steps, {threads}; ms per training step:\n\n"
                           + table(["", "PyTorch", "engine via tinygrad_like.torch", "engine / PyTorch"], rows))


# ---------------------------------------------------------------- the README's summary

def identity(machine: str) -> str:
    """The part of a machine line that names the machine and its software (CPU, cores, cache, numpy, BLAS),
    without what each run measured on it (matmul peak, bandwidth, load)."""
    return " | ".join(machine.split(" | ")[:2])


def summary(folder: Path = None) -> str:
    """A few headline rows for the README: the main job, a training step of the small GPT on every core, and a
    PyTorch script through the facade, each ours against PyTorch's, with the date and load each was measured
    at, then the machine line they share (or each one's, if they ran on different machines)."""
    folder = folder or record.RESULTS
    job, train, facade = (record.load(name, folder) for name in ("train_gpt_torch", "bench_train", "bench_facade"))
    rows = []
    ours, theirs = job["runs"]["tinygrad_like"], job["runs"]["PyTorch"]
    rows.append((job, f"the main job, {ours['steps']} steps, start to end (ours also samples and draws after training)",
                 f"{ours['wall_time_s']:.0f} s", f"{theirs['wall_time_s']:.0f} s",
                 ratio(ours["wall_time_s"], theirs["wall_time_s"])))
    last = list(train["runs"].values())[-1]["small"]
    cfg, pool = CONFIGS["small"], last["ours"]["threads"].split(",")[0]
    fused = last.get("torch-fused", {}).get("ms")
    rows.append((train, f"one training step of the small GPT ({cfg['n_layer']} layers, {cfg['n_embd']} wide, batch "
                        f"{cfg['batch']}×{cfg['block_size']}), {pool} threads; PyTorch's fused attention",
                 f"{ms(last['ours']['ms'])} ms", f"{ms(fused)} ms" if fused else "-", ratio(last["ours"]["ms"], fused)))
    f = next(iter(facade["runs"].values()))
    rows.append((facade, "one training step of a PyTorch script (`gpt_char.py`) run through `tinygrad_like.torch`",
                 f"{ms(f['median_engine_ms'])} ms", f"{ms(f['median_torch_ms'])} ms", f"{f['ratio']:.2f}"))
    if (folder / "real_programs.json").exists():
        rows += real_programs_rows(record.load("real_programs", folder))
    body = table(["", "tinygrad_like", "PyTorch", "our time / PyTorch's", "measured"],
                 [[label, a, b, r, f"{data['date'][:10]}, load {data['load']:.2f} on {data['cores']} cores"]
                  for data, label, a, b, r in rows])
    machines = sorted({identity(data["machine"]) for data, *_ in rows})
    return body + "\n```\n" + "\n".join(machines) + "\n```\n"


def real_programs_rows(data: dict) -> list:
    """The summary's rows for the public programs run unchanged: nanoGPT's training on its own, then the range
    of the others' ratios (each program's own ms per iteration, ours / PyTorch's), and whether every loss
    printed at the fixed step agreed to the table's four decimals."""
    programs = next(iter(data["runs"].values()))["programs"]
    timed = {name: (p["ours"]["ms_per_iter"], p["torch"]["ms_per_iter"]) for name, p in programs.items()
             if p.get("ours") and p.get("torch") and p["ours"].get("ms_per_iter") and p["torch"].get("ms_per_iter")}
    if not timed:
        return []
    losses = [(p["ours"]["loss"], p["torch"]["loss"]) for p in programs.values()
              if p.get("ours") and p.get("torch") and p["ours"].get("loss") is not None
              and p["torch"].get("loss") is not None]
    same = all(f"{a:.4f}" == f"{b:.4f}" for a, b in losses)
    head = next((name for name in timed if name.startswith("nanoGPT train")), next(iter(timed)))
    ours, theirs = timed.pop(head)
    script = programs[head]["command"].split()[0]
    rows = [(data, f"one training iteration of {head.split()[0]}'s `{script}`, unchanged, "
                   "through `python -m tinygrad_like.torch` (as the program times it)",
             f"{ms(ours)} ms", f"{ms(theirs)} ms", ratio(ours, theirs))]
    if timed:
        ratios = sorted(a / b for a, b in timed.values())
        families = sorted({name.split()[0] for name in timed})
        agree = "every" if same else "not every"
        rows.append((data, f"{len(timed)} more public programs ({', '.join(families)}), unchanged, each as it times "
                           f"itself; {agree} loss at the same step equal to PyTorch's to 4 decimals",
                     "-", "-", f"{ratios[0]:.2f} to {ratios[-1]:.2f}"))
    return rows


def real_programs(data: dict) -> str:
    """Real PyTorch programs, unchanged, on PyTorch and through the facade: ran or where they stopped, the loss
    at a fixed step on both sides, ms per iteration as each program times it (or the wall time of a run
    without iterations)."""
    r = next(iter(data["runs"].values()))

    def outcome(side):
        if side is None:
            return "-"
        if side["ran"]:
            return "ran"
        where = side["error"].get("where") or {}
        return f"stopped: {side['error']['type']}" + (f" at {where['file']}:{where['line']}" if where else "")

    def loss(side):
        return f"{side['loss']:.4f}" if side and side.get("loss") is not None else "-"

    def speed(side):
        if not side:
            return "-"
        return ms(side["ms_per_iter"]) if side.get("ms_per_iter") else f"{side['wall_s']:.1f} s (whole run)"

    rows, errors = [], []
    for name, p in r["programs"].items():
        torch, ours = p.get("torch"), p.get("ours")
        both = torch and ours and torch.get("loss") and ours.get("loss")
        timed = torch and ours and torch.get("ms_per_iter") and ours.get("ms_per_iter")
        rows.append([f"{name} (`{p['command']}`)", outcome(torch), outcome(ours), p["loss_label"] or "-",
                     loss(torch), loss(ours), f"{ours['loss'] / torch['loss']:.3f}" if both else "-",
                     speed(torch), speed(ours), ratio(ours["ms_per_iter"], torch["ms_per_iter"]) if timed else "-"])
        errors += [f"- {name} on {label}: {s['error']['type']}: {s['error']['message']}"
                   for label, s in (("PyTorch", torch), ("the facade", ours)) if s and not s["ran"]]
    stubs = (f" Not installed here and unused offline, so stubbed on both sides: {', '.join(r['stubs'])}."
             if r.get("stubs") else "")
    rounds = ("one round per side, PyTorch's first" if r["rounds"] == 1 else
              f"{r['rounds']} rounds per side, the sides alternated; losses from the first, times the median")
    text = (f"\n{rounds}. The PyTorch side runs the DataLoader workers the programs ask for (minGPT's and makemore's "
            f"num_workers=4), the facade loads in the main process.{stubs}\n\n")
    text += table(["program (command)", "PyTorch", "facade", "loss", "PyTorch", "facade", "facade / PyTorch",
                   "ms/iter PyTorch", "ms/iter facade", "facade / PyTorch"], rows)
    return header(data) + text + ("\nWhere a run stopped:\n\n" + "\n".join(errors) + "\n" if errors else "")


RENDER = {f.__name__: f for f in (bench_train, bench_ops, bench_kernels, bench_threads, bench_generate,
                                  train_gpt_torch, bench_facade, bench_revisions, real_programs)}
RENDER["bench_train_defaults"], RENDER["bench_train_defaults_numpy"] = bench_train_defaults, bench_train_defaults


def regenerate(text: str, folder: Path = record.RESULTS) -> str:
    """`text` with every marked part rendered afresh from the results files in `folder`."""
    def render(m):
        name = m[2]
        if name == "summary":
            return m[1] + summary(folder) + m[4]
        if name not in RENDER:
            raise KeyError(f"report: a page marks '{name}', which is not a benchmark ({sorted(RENDER)} or summary)")
        return m[1] + RENDER[name](record.load(name, folder)) + m[4]
    return BLOCK.sub(render, text)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="only say whether the pages are current")
    args = ap.parse_args(argv)
    stale = 0
    for page in PAGES:
        text = page.read_text()
        new = regenerate(text)
        name = page.relative_to(HERE.parent)
        if args.check:
            print(f"{name} matches the results" if new == text else f"{name} differs from the results: "
                  "python benchmarks/report.py")
            stale += new != text
        else:
            record.write_atomic(page, new)
            print(f"wrote {name} ({len(BLOCK.findall(new))} generated parts)")
    return int(stale > 0)


if __name__ == "__main__":
    sys.exit(main())

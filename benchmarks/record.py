"""Benchmark results as files: each benchmark run as a command writes benchmarks/results/<name>.json,
and benchmarks/report.py writes the README's performance tables from those files.

A file holds one command's results:

    benchmark   the script's name ("bench_train")
    command     the command that produced the file, to run it again
    date        when it ran (UTC, ISO 8601)
    machine     the line benchmarks/machine.py prints (CPU, BLAS, matmul peak, bandwidth, load)
    load        the 1-minute load average when the command started; above about half the core count,
                other processes shared the cores and the figures are slower than the machine is
    cores       os.cpu_count()
    runs        {label: what the benchmark's main() returned}, one entry per setting the command ran
                (bench_train: "1 thread" and "2 threads"), every figure a number

The file is written to a temporary name beside it, then renamed: a reader never sees half a file.
"""
from __future__ import annotations

import datetime
import json
import os
import re
import shlex
import sys
from pathlib import Path

from machine import machine_line

RESULTS = Path(__file__).resolve().parent / "results"


def load_of(line: str) -> float | None:
    """The load average a machine line ends its measured part with (`| load 0.94`), None if unknown."""
    m = re.search(r"\| load (\d+\.\d+)", line)
    return float(m[1]) if m else None


def save(name: str, runs: dict, argv: list[str] | None = None, folder: Path = RESULTS,
         script: str | None = None) -> Path:
    """Write folder/<name>.json for the command `python benchmarks/<script>.py argv` (script: name by default;
    argv: this process's arguments by default, after TINYGRAD_LIKE_KERNELS=... when that is set); `runs` as
    described above. Returns the path."""
    argv = sys.argv[1:] if argv is None else argv
    line = machine_line()
    kernels = os.environ.get("TINYGRAD_LIKE_KERNELS")
    command = shlex.join(["python", f"benchmarks/{script or name}.py", *argv])
    data = dict(benchmark=name, command=f"TINYGRAD_LIKE_KERNELS={kernels} {command}" if kernels else command,
                date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                machine=line, load=load_of(line), cores=os.cpu_count(), runs=runs)
    folder.mkdir(parents=True, exist_ok=True)
    path = write_atomic(folder / f"{name}.json", json.dumps(data, indent=1, default=_number) + "\n")
    print(f"results: {path}")
    return path


def run_both_clocks(name: str, main, argv: list[str]) -> None:
    """The command-line tail of a benchmark that times on every core in wall time and on one thread in CPU
    time (bench_ops, bench_kernels): a `--worker` process runs main(argv) and prints its RESULT line, recording
    nothing; otherwise main runs on every core, then (unless argv fixes the threads or the clock) on one
    thread in CPU time, the steadier figures on a busy machine, and both are saved as `name`."""
    if "--worker" in argv:
        main(argv)
        return
    runs = {"every core, wall time": main(argv)}
    if "--threads" not in argv and "--clock" not in argv:
        runs["1 thread, CPU time"] = main(argv + ["--threads", "1", "--clock", "cpu"])
    save(name, runs)


def write_atomic(path: Path, text: str) -> Path:
    """Write `text` to `path` in one step (tinygrad_like/atomic_file.py); return the path. The engine is
    imported here, when a result is saved, not when a benchmark's worker (PyTorch's too) imports this file."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tinygrad_like.atomic_file import write_atomic as write
    write(path, text)
    return path


def _number(value):
    """numpy scalars as Python numbers (json knows only the latter)."""
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"record.save: {type(value).__name__} is not a number: {value!r}")


def load(name: str, folder: Path = RESULTS) -> dict:
    return json.loads((folder / f"{name}.json").read_text())

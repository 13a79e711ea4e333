"""The benchmark scripts run and report every figure they promise (their numbers are not judged here:
speed is measured by running them, never by a timed unit test)."""
import importlib.util
import math
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load(name):
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bench_ops_reports_engine_and_numpy_times():
    results = load("bench_ops").main(["--repeats", "20"])
    assert {"2x2 add", "256x256 matmul"} <= set(results)
    assert any(k.startswith("row max") for k in results) and any(k.startswith("row sum") for k in results)
    assert all(ours > 0 and plain > 0 for ours, plain in results.values())


def test_bench_generate_reports_both_paths_per_context():
    rows = load("bench_generate").main(["--contexts", "8", "16", "--tokens", "4", "--repeats", "3"])
    assert [r["context"] for r in rows] == [8, 16]
    # the cached figure is a difference of two medians: on a loaded machine it can come out <= 0, so the
    # test checks that both paths ran and gave numbers, not how fast they were (that is the benchmark's job)
    assert all(r["no_cache_ms"] > 0 and math.isfinite(r["cache_ms"]) for r in rows)


@pytest.mark.parametrize("tune", [[], ["--no-tune-malloc"]])
def test_bench_train_runs_ours_in_a_worker_process(tune):
    summary = load("bench_train").main(["--configs", "tiny", "--rounds", "1", "--steps", "2", "--warmup", "1",
                                        "--no-torch"] + tune)
    row = summary["tiny"]["ours"]
    assert row["ms"] > 0 and row["tok_s"] > 0 and row["maxrss_mb"] > 0 and 0 < row["mfu"] < 1

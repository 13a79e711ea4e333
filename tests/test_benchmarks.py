"""The benchmark scripts run and report every figure they promise (their numbers are not judged here:
speed is measured by running them, never by a timed unit test)."""
import importlib.util
import math
import re
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load(name):
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bench_ops_reports_engine_and_numpy_times(capsys):
    results = load("bench_ops").main(["--repeats", "20", "--rounds", "1", "--op-repeats", "1", "--no-torch"])
    hot = results.pop("hot ops")
    assert {"2x2 add", "256x256 matmul"} <= set(results)
    assert any(k.startswith("row max") for k in results) and any(k.startswith("row sum") for k in results)
    assert all(ours > 0 and plain > 0 for ours, plain in results.values())
    assert set(hot) == {"attention", "gelu", "exact gelu", "layernorm", "softmax", "cross-entropy", "linear",
                        "block products"}
    assert all(r["ours_ms"] > 0 and r["floor_ms"] > 0 and r["torch_ms"] is None for r in hot.values())
    flops = 6 * 2 * 16 * 4 * 128 * 128 * 32                              # six (16, 4, 128, 128) matmuls over 32
    assert hot["attention"]["flop_ms"] == pytest.approx(flops / hot["attention"]["gflops"] / 1e6)
    assert capsys.readouterr().out.startswith("machine: ")


def test_machine_line_names_the_blas_and_the_measured_figures(monkeypatch):
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Haswell")
    line = load("machine").machine_line()
    assert line.startswith("machine: ") and "cores" in line and "BLAS" in line
    assert "GFLOP/s" in line and "GB/s" in line and "tiny numpy call" in line
    assert "OPENBLAS_CORETYPE=Haswell" in line
    assert re.search(r"cores, L2 \d+ KiB \|", line) and re.search(r"\| load (\d+\.\d\d|unknown)", line)


def test_bench_generate_reports_both_paths_per_context():
    rows = load("bench_generate").main(["--contexts", "8", "16", "--tokens", "4", "--repeats", "3"])
    assert [r["context"] for r in rows] == [8, 16]
    # the cached figure is a difference of two medians: on a loaded machine it can come out <= 0, so the
    # test checks that both paths ran and gave numbers, not how fast they were (that is the benchmark's job)
    assert all(r["no_cache_ms"] > 0 and math.isfinite(r["cache_ms"]) for r in rows)


@pytest.mark.parametrize("tune", [[], ["--no-tune-malloc"]])
def test_bench_train_runs_ours_in_a_worker_process(tune):
    summary = load("bench_train").main(["--configs", "tiny", "--rounds", "1", "--steps", "2", "--warmup", "1",
                                        "--no-torch", "--threads", "1"] + tune)
    row = summary["tiny"]["ours"]
    assert row["threads"] in ("1, BLAS 1", "1, BLAS None")                  # the pool's threads, BLAS's
    assert row["ms"] > 0 and row["tok_s"] > 0 and row["maxrss_mb"] > 0 and row["peak_gflops"] > 0
    # MFU: model flops per second over numpy's matmul peak, measured in the worker at another moment than
    # the steps, so under load it can exceed 1; the test checks it against tokens/s and the peak instead
    from models.arithmetic import flops_per_token
    from models.gpt import GPTConfig
    bench = load("bench_train")
    config = GPTConfig(**{k: v for k, v in bench.CONFIGS["tiny"].items() if k != "batch"})
    assert row["mfu"] == pytest.approx(flops_per_token(config) * row["tok_s"] / (row["peak_gflops"] * 1e9))


def test_bench_threads_times_each_kind_on_one_and_two_threads_and_estimates_more():
    bench = load("bench_threads")
    results = bench.main(["--rounds", "1", "--steps", "1", "--cores", "4"])
    assert set(results["speedups"]) == {"matmul", "matmul on BLAS threads", "attention", "elementwise", "optimizer"}
    assert all(one > 0 and two > 0 for one, two in results["speedups"].values())
    assert {"matmul", "attention", "elementwise", "optimizer", "other"} <= set(results["split"])
    assert set(results["on_paper"]) == set(results["on_paper_serial_elementwise"]) == {2, 4}
    # threading more kinds never makes the estimate slower (each kind's speedup there is at least 1x)
    assert results["on_paper"][4] >= results["on_paper_serial_elementwise"][4]


def test_bench_threads_estimate_is_amdahls_law():
    """Half the step parallel at efficiency 0.75 (1.5x on 2 threads), half serial: on 4 threads the parallel
    half runs 3x faster, so the step takes 0.5 + 0.5 / 3 = 2/3 of its time."""
    on_paper = load("bench_threads").on_paper
    assert on_paper({"matmul": 50.0, "other": 50.0}, {"matmul": (3.0, 2.0)}, 4) == pytest.approx(1.5)
    assert on_paper({"matmul": 50.0, "other": 50.0}, {"matmul": (3.0, 2.0)}, 2) == pytest.approx(100 / (50 + 50 / 1.5))


def test_bench_kernels_times_each_op_with_and_without_the_kernels():
    pytest.importorskip("numba")
    rows = load("bench_kernels").main(["--rounds", "1", "--op-repeats", "1", "--threads", "1", "--kinds",
                                       "numpy,fast,c"])
    assert set(rows) == {"gelu", "gelu_erf", "silu", "swiglu", "layernorm", "rmsnorm", "softmax", "masked_softmax",
                         "log_softmax", "cross_entropy", "attention", "adamw"}
    assert all(r["numpy"] > 0 and r["fast"] > 0 for r in rows.values())
    from tinygrad_like.fast.kernels import c_build
    if c_build.library() is not None:
        assert rows["gelu"]["c"] > 0 and rows["layernorm"]["c"] is None        # rows.c has no LayerNorm
        assert rows["gelu_erf"]["c"] > 0
        assert rows["attention"]["c"] > 0


def test_bench_revisions_times_both_trees_alternated_and_divides_after_by_before(capsys):
    rows = load("bench_revisions").main(["HEAD", "HEAD", "--configs", "tiny", "--threads", "1", "--rounds", "1",
                                         "--steps", "2", "--warmup", "1"])
    assert set(rows) == {"tiny, 1 thread (ms/step)", "2x2 add f+b (us)"}
    for row in rows.values():
        before, after = row["before (HEAD)"], row["after (HEAD)"]
        assert before > 0 and after > 0 and row["ratio"] == pytest.approx(after / before)
    assert rows["2x2 add f+b (us)"]["numpy_add_us"] > 0
    assert capsys.readouterr().out.startswith("machine: ")


def test_bench_elementwise_times_one_call_and_shared_for_every_kind_and_shape():
    import tinygrad_like
    from tinygrad_like.fast import arrays, elementwise
    bench, thresholds = load("bench_elementwise"), (elementwise.SHARE_FROM, arrays.FILL_FROM)
    try:
        rows = bench.main(["--rounds", "1", "--repeats", "1", "--threads", "2"])
    finally:
        tinygrad_like.set_num_threads(1)
    assert (elementwise.SHARE_FROM, arrays.FILL_FROM) == thresholds                  # put back
    assert len(rows) == 3 * len(bench.SHAPES)
    assert all(r["one_call_ms"] > 0 and r["shared_ms"] > 0 and r["ratio"] > 0 for r in rows.values())


def test_bench_streams_times_every_variant_of_dropouts_draw(capsys):
    pytest.importorskip("numba", reason="the compiled draws are the `fast` extra's")
    from tinygrad_like.fast import streams
    if streams.twister_library() is None:
        pytest.skip(f"twister.c does not build here: {streams.reason()}")
    bench = load("bench_streams")
    rows = bench.main(["--rounds", "1", "--repeats", "1"])
    assert set(rows) == {f"{v} {name}" for v in bench.VARIANTS for name in [*bench.SHAPES, "per nanoGPT iteration"]}
    assert all(r["us"] > 0 for r in rows.values())
    for v in bench.VARIANTS:
        assert rows[f"{v} per nanoGPT iteration"]["us"] == pytest.approx(
            sum(count * rows[f"{v} {name}"]["us"] for name, (_, count) in bench.SHAPES.items()))
    assert capsys.readouterr().out.startswith("machine: ")

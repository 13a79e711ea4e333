"""The performance tables (docs/performance.md) and the README's summary of them are the stored benchmark
results: benchmarks/report.py, run in memory on today's pages and benchmarks/results/*.json, changes nothing.
Also: results files are complete, and the renderers put the stored numbers in the cells by hand-checked
examples."""
import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
README = ROOT / "README.md"
PERFORMANCE = ROOT / "docs" / "performance.md"


def load(name):
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))  # the benchmarks import their siblings (machine, record)
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


report = load("report")
record = load("record")


@pytest.mark.parametrize("page", [PERFORMANCE, README], ids=["docs/performance.md", "README.md"])
def test_the_page_matches_the_stored_results(page):
    text = page.read_text()
    assert report.regenerate(text) == text, f"{page.name} is stale: python benchmarks/report.py"
    assert report.PAGES == (PERFORMANCE, README)


def test_the_readme_shows_a_summary_and_the_full_tables_live_in_the_docs():
    readme = README.read_text()
    assert "<!-- report:summary -->\n" in readme and "<!-- report:bench_" not in readme
    assert "(docs/performance.md)" in readme


@pytest.mark.parametrize("name", sorted(report.RENDER))
def test_every_benchmark_has_a_marked_part_and_a_complete_results_file(name):
    text = PERFORMANCE.read_text()
    assert f"<!-- report:{name} -->\n" in text and f"<!-- /report:{name} -->" in text
    data = json.loads((BENCHMARKS / "results" / f"{name}.json").read_text())
    script = "bench_train" if name.startswith("bench_train") else name      # bench_train_defaults*: --defaults
    assert data["benchmark"] == name
    assert re.match(rf"(TINYGRAD_LIKE_KERNELS=\w+ )?python benchmarks/{script}.py", data["command"])
    assert data["machine"].startswith("machine: ") and re.fullmatch(r"\d{4}-\d\d-\d\dT.*", data["date"])
    assert data["load"] == record.load_of(data["machine"]) and data["cores"] >= 1 and data["runs"]


def fake(name, runs, load=0.1, cores=2):
    return dict(benchmark=name, command=f"python benchmarks/{name}.py", date="2026-01-02T03:04:05+00:00",
                machine=f"machine: X | load {load:.2f}", load=load, cores=cores, runs=runs)


def test_generate_table_by_hand():
    text = report.bench_generate(fake("bench_generate", {"": [dict(context=32, no_cache_ms=2.0, cache_ms=0.5)]}))
    assert "| 32 | 2.00 | 0.50 | 4.0x |" in text
    assert "`python benchmarks/bench_generate.py` on 2026-01-02" in text and "machine: X | load 0.10" in text
    assert "shared the machine" not in text


def test_a_busy_machine_is_said():
    text = report.bench_generate(fake("bench_generate", {"": []}, load=3.5, cores=2))
    assert "The load average was 3.50 on 2 cores" in text


def test_train_table_by_hand():
    row = dict(ours=dict(ms=150.0, spread=[140.0, 160.0], maxrss_mb=150.2, threads="2, BLAS 1"),
               **{"torch-explicit": dict(ms=100.0, maxrss_mb=400.0), "torch-fused": dict(ms=120.0, maxrss_mb=430.4)})
    text = report.bench_train(fake("bench_train", {"2 threads": {"small": row}}))
    assert ("| small (4 layers, 128 wide, batch 16×128) | 2 (BLAS 1) | 150.0 (140.0-160.0) | 100.0 | 120.0 "
            "| 1.50 | 1.25 | 150 / 430 MB |") in text


def test_save_writes_the_file_whole_and_load_reads_it(tmp_path, monkeypatch):
    monkeypatch.setattr(record, "machine_line", lambda: "machine: test | load 1.25")
    path = record.save("bench_generate", {"": [dict(context=8, no_cache_ms=1.0, cache_ms=0.25)]}, ["--repeats", "2"],
                       folder=tmp_path)
    data = record.load("bench_generate", tmp_path)
    assert path == tmp_path / "bench_generate.json" and [p.name for p in tmp_path.iterdir()] == [path.name]
    assert data["command"] == "python benchmarks/bench_generate.py --repeats 2" and data["load"] == 1.25
    assert data["runs"][""][0]["cache_ms"] == 0.25


def test_summary_by_hand(tmp_path):
    """The README's headline rows: the main job's wall times, the small GPT's step on the last thread setting
    against PyTorch's fused attention, the facade's medians; one machine line when all ran on one machine."""
    job = fake("train_gpt_torch", {"tinygrad_like": dict(wall_time_s=108.04, steps=800),
                                   "PyTorch": dict(wall_time_s=113.7)}, load=1.5)
    job["machine"] = "machine: CPU X, 2 cores | numpy 2 | matmul f32 1024² 100 GFLOP/s | load 1.50"
    train = fake("bench_train", {"1 threads": {"small": dict(ours=dict(ms=999.0, threads="1, BLAS 1"))},
                                 "2 threads": {"small": dict(ours=dict(ms=150.0, threads="2, BLAS 1"),
                                                             **{"torch-fused": dict(ms=120.0)})}})
    train["machine"] = "machine: CPU X, 2 cores | numpy 2 | matmul f32 1024² 90 GFLOP/s | load 0.10"
    facade = fake("bench_facade", {"": dict(median_engine_ms=16.0, median_torch_ms=12.5, ratio=1.28)})
    facade["machine"] = "machine: CPU X, 2 cores | numpy 2 | matmul f32 1024² 95 GFLOP/s | load 0.10"
    for data in (job, train, facade):
        (tmp_path / f"{data['benchmark']}.json").write_text(json.dumps(data))
    text = report.summary(tmp_path)
    assert "| 108 s | 114 s | 0.95 | 2026-01-02, load 1.50 on 2 cores |" in text
    assert "2 threads; PyTorch's fused attention | 150.0 ms | 120.0 ms | 1.25 |" in text and "999" not in text
    assert "| 16.00 ms | 12.50 ms | 1.28 |" in text
    assert text.endswith("```\nmachine: CPU X, 2 cores | numpy 2\n```\n")


def test_summary_rows_of_the_real_programs_by_hand():
    """nanoGPT's training row on its own, then the others' ratios as a range (lowest to highest), and whether
    every loss agrees to 4 decimals; a program without a time (a sampling run) counts in neither."""
    def side(ms_, loss):
        return dict(ran=True, ms_per_iter=ms_, loss=loss, wall_s=1.0)
    programs = {"nanoGPT train": dict(command="train.py config/x.py", ours=side(20.0, 3.5), torch=side(25.0, 3.5)),
                "nanoGPT sample": dict(command="sample.py", ours=dict(ran=True, wall_s=1.0),
                                       torch=dict(ran=True, wall_s=2.0)),
                "makemore mlp": dict(command="makemore.py", ours=side(3.0, 2.25), torch=side(6.0, 2.25)),
                "minGPT sort": dict(command="sort.py", ours=side(12.0, 0.49), torch=side(10.0, 0.49))}
    rows = report.real_programs_rows(fake("real_programs", {"": dict(programs=programs)}))
    assert [r[1:] for r in rows] == [
        ("one training iteration of nanoGPT's `train.py`, unchanged, through `python -m tinygrad_like.torch` "
         "(as the program times it)", "20.00 ms", "25.00 ms", "0.80"),
        ("2 more public programs (makemore, minGPT), unchanged, each as it times itself; every loss at the same "
         "step equal to PyTorch's to 4 decimals", "-", "-", "0.50 to 1.20")]
    programs["makemore mlp"]["ours"]["loss"] = 2.2501
    rows = report.real_programs_rows(fake("real_programs", {"": dict(programs=programs)}))
    assert "not every loss" in rows[1][1]


def test_real_programs_table_by_hand():
    ran = dict(ran=True, loss=2.0, ms_per_iter=10.0, wall_s=30.0)
    stopped = dict(ran=False, wall_s=1.0, error=dict(type="AttributeError", message="no contiguous",
                                                      where=dict(file="model.py", line=72, code="y = ...")))
    runs = {"": dict(rounds=2, stubs=["tiktoken"], programs={
        "a train": dict(command="train.py --x=1", loss_label="val loss at step 30", torch=ran,
                        ours=dict(ran, loss=2.2, ms_per_iter=25.0)),
        "a sample": dict(command="sample.py", loss_label="", torch=dict(ran=True, wall_s=3.0), ours=stopped)})}
    text = report.real_programs(fake("real_programs", runs))
    assert ("| a train (`train.py --x=1`) | ran | ran | val loss at step 30 | 2.0000 | 2.2000 | 1.100 | 10.00 "
            "| 25.00 | 2.50 |") in text
    assert ("| a sample (`sample.py`) | ran | stopped: AttributeError at model.py:72 | - | - | - | - "
            "| 3.0 s (whole run) | 1.0 s (whole run) | - |") in text
    assert "- a sample on the facade: AttributeError: no contiguous" in text
    assert "stubbed on both sides: tiktoken" in text
    assert "2 rounds per side, the sides alternated" in text

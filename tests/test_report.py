"""The README's performance tables are the stored benchmark results: benchmarks/report.py, run in memory
on today's README and benchmarks/results/*.json, changes nothing. Also: results files are complete, and
the renderers put the stored numbers in the cells by hand-checked examples."""
import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
README = ROOT / "README.md"


def load(name):
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))  # the benchmarks import their siblings (machine, record)
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


report = load("report")
record = load("record")


def test_readme_matches_the_stored_results():
    text = README.read_text()
    assert report.regenerate(text) == text, "the README is stale: python benchmarks/report.py"


@pytest.mark.parametrize("name", sorted(report.RENDER))
def test_every_benchmark_has_a_marked_part_and_a_complete_results_file(name):
    text = README.read_text()
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

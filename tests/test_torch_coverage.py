"""The coverage report (benchmarks/torch_coverage.py) is current: docs/torch_coverage.md and the README's counts
are what PyTorch's recorded names (docs/torch_names.json) and the facade as it is now give, so adding or
refusing a name without regenerating them fails here. No PyTorch needed; with it, the recorded names are
checked to be the installed PyTorch's when its version matches."""
import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("torch_coverage", ROOT / "benchmarks" / "torch_coverage.py")
coverage = importlib.util.module_from_spec(spec)
sys.modules["torch_coverage"] = coverage
spec.loader.exec_module(coverage)

NAMES = json.loads(coverage.NAMES.read_text())
COVERAGE = coverage.coverage(NAMES)


def test_the_report_and_the_readme_counts_are_current():
    assert coverage.report(COVERAGE, NAMES["version"]) == coverage.REPORT.read_text(), \
        "docs/torch_coverage.md is stale: python benchmarks/torch_coverage.py"
    readme = coverage.README.read_text()
    assert coverage.regenerate_readme(readme, COVERAGE, NAMES["version"]) == readme, \
        "the README's coverage counts are stale: python benchmarks/torch_coverage.py"


def test_every_name_is_classified_once_and_refusals_say_why():
    for namespace, kinds in COVERAGE.items():
        listed = kinds["supported"] + list(kinds["refused"]) + kinds["missing"]
        assert sorted(listed) == NAMES["names"][namespace]
        assert all(kinds["refused"].values())


@pytest.mark.parametrize("qualified, expected", [
    ("torch.cuda_stream_like", "one CPU"), ("torch.sparse_coo_tensor", "sparse"), ("torch.quantize_per_tensor",
                                                                                    "quantized"),
    ("torch.nn.Conv2d", "no convolutions"), ("torch.nn.functional.conv1d", "convolution"),
    ("torch.lstm_cell", "behind nn.RNN, nn.LSTM and nn.GRU"), ("torch.optim.RAdam", "SGD, Adam and AdamW"),
    ("torch.optim.lr_scheduler.LinearLR", "LambdaLR"), ("torch.nn.init.normal", "underscore"),
    ("torch.utils.data.IterDataPipe", "DataPipes"), ("torch.svd", "linear algebra"), ("torch.stft", "Fourier"),
    ("torch.float8_e4m3fn", "no such dtype"), ("torch.view_as_complex", "complex"),
    ("torch.nn.LazyLinear", "lazy"), ("torch.utils.data.DistributedSampler", "one process"),
    ("torch.as_strided_copy", "no storages"), ("torch.view_as_real_copy", "no complex"),
    ("torch.quantize_per_tensor", "quantized"), ("torch.fused_moving_avg_obs_fake_quant", "quantized"),
])
def test_categories_answer_kinds_of_names(qualified, expected):
    import tinygrad_like.torch as facade
    from tinygrad_like.torch._refuse import NotInEngine, reason
    assert expected in reason(qualified)
    module, _, name = qualified.rpartition(".")
    target = facade
    for part in module.split(".")[1:]:
        target = getattr(target, part)
    with pytest.raises(NotInEngine, match=expected):
        getattr(target, name)


def test_a_quantile_is_not_taken_for_a_quantized_name():
    from tinygrad_like.torch._refuse import reason
    for name in ("quantile", "nanquantile"):
        for qualified in (f"torch.{name}", f"torch.Tensor.{name}"):
            assert "quantized" not in (reason(qualified) or "")


def test_names_the_programs_use_are_supported():
    supported = {(ns, n) for ns, kinds in COVERAGE.items() for n in kinds["supported"]}
    for ns, name in [("torch", "einsum"), ("torch", "bmm"), ("torch", "float16"), ("torch", "autocast"),
                     ("torch.nn", "LeakyReLU"), ("torch.nn.functional", "normalize"), ("torch.utils.data",
                                                                                       "RandomSampler"),
                     ("torch.optim.lr_scheduler", "OneCycleLR"), ("torch.Tensor", "contiguous"),
                     ("torch.Tensor", "nelement")]:
        assert (ns, name) in supported


def test_the_recorded_names_are_the_installed_pytorchs():
    torch = pytest.importorskip("torch", reason="the recorded names are compared with PyTorch's own")
    if torch.__version__ != NAMES["version"]:
        pytest.skip(f"PyTorch {torch.__version__} is installed; the names were recorded from {NAMES['version']}")
    assert coverage.pytorch_names() == NAMES

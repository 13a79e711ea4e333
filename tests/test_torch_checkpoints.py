"""Checkpoints cross between PyTorch and the facade: torch.load here reads PyTorch's zip format without running
pickled code (a file made by PyTorch 2.13 is stored in tests/data, so this runs without PyTorch), and
torch.save here writes what PyTorch's torch.load(weights_only=True) reads (checked against PyTorch when
it is installed)."""
import io
import pathlib
import pickle
import zipfile

import numpy as np
import pytest

import tinygrad_like.torch as torch
from tinygrad_like import Tensor

STORED = pathlib.Path(__file__).resolve().parent / "data" / "pytorch_checkpoint.pt"
# How STORED was made (PyTorch 2.13, `torch.save(ck, path)`), every value written so that it can be checked here:
#   emb = torch.arange(12.0).reshape(4, 3) / 8
#   ck = {"model": OrderedDict(weight=torch.arange(6.0).reshape(2, 3) / 4, bias=torch.tensor([-1.0, 2.0]),
#                              wte=emb, lm_head=emb),
#         "ints": torch.arange(5), "flags": torch.tensor([True, False, True]),
#         "f64": torch.tensor([0.1, 1e-300, -2.5], dtype=torch.float64),
#         "i32": torch.tensor([-3, 7], dtype=torch.int32),
#         "u8": torch.tensor([0, 255], dtype=torch.uint8), "scalar": torch.tensor(2.5),
#         "transposed": torch.arange(12.0).reshape(3, 4).t(), "offset": torch.arange(10)[3:7],
#         "model_args": dict(n_layer=2, dropout=0.2, bias=False, name="gpt", none=None),
#         "iter_num": 30, "big": 2 ** 40, "neg": -7, "betas": (0.9, 0.95), "nested": [1, "a", [2.5, None]],
#         "param": torch.nn.Parameter(torch.ones(2))}


def test_reads_a_checkpoint_pytorch_wrote():
    ck = torch.load(STORED, map_location="cpu")
    model = ck["model"]
    assert list(model) == ["weight", "bias", "wte", "lm_head"]
    np.testing.assert_array_equal(model["weight"].numpy(), np.arange(6.0, dtype=np.float32).reshape(2, 3) / 4)
    assert model["weight"].dtype == np.float32 and model["bias"].tolist() == [-1.0, 2.0]
    np.testing.assert_array_equal(model["wte"].numpy(), model["lm_head"].numpy())        # one storage, tied
    assert ck["ints"].dtype == np.int64 and ck["ints"].tolist() == [0, 1, 2, 3, 4]
    assert ck["flags"].tolist() == [True, False, True] and ck["u8"].tolist() == [0, 255]
    assert ck["f64"].dtype == np.float64 and ck["f64"].tolist() == [0.1, 1e-300, -2.5]
    assert ck["i32"].dtype == np.int32 and ck["i32"].tolist() == [-3, 7]
    assert ck["scalar"].shape == () and ck["scalar"].item() == 2.5
    np.testing.assert_array_equal(ck["transposed"].numpy(), np.arange(12.0).reshape(3, 4).T)  # strides read
    assert ck["offset"].tolist() == [3, 4, 5, 6]                                                # storage offset
    assert ck["model_args"] == dict(n_layer=2, dropout=0.2, bias=False, name="gpt", none=None)
    assert (ck["iter_num"], ck["big"], ck["neg"], ck["betas"]) == (30, 2 ** 40, -7, (0.9, 0.95))
    assert ck["nested"] == [1, "a", [2.5, None]]
    assert isinstance(ck["param"], torch.nn.Parameter) and ck["param"].requires_grad
    assert ck["param"].tolist() == [1.0, 1.0]


def test_a_model_loads_the_stored_weights_and_writes_them_back():
    ck = torch.load(STORED)
    layer = torch.nn.Linear(3, 2)
    layer.load_state_dict({"weight": ck["model"]["weight"], "bias": ck["model"]["bias"]})
    assert layer(torch.ones(1, 3)).tolist()[0] == pytest.approx([0.75 - 1.0, 3.0 + 2.0])
    buffer = io.BytesIO()
    torch.save(ck, buffer)
    again = torch.load(io.BytesIO(buffer.getvalue()))
    assert again["model_args"] == ck["model_args"] and again["betas"] == (0.9, 0.95) and again["big"] == 2 ** 40
    np.testing.assert_array_equal(again["transposed"].numpy(), ck["transposed"].numpy())


def evil_checkpoint(tmp_path, payload) -> pathlib.Path:
    path = tmp_path / "evil.pt"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("evil/data.pkl", pickle.dumps(payload, protocol=2))
        archive.writestr("evil/version", "3\n")
    return path


class RunsCode:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (pathlib.Path.write_text, (self.marker, "ran"))


def test_a_pickle_that_would_run_code_is_refused_unrun(tmp_path):
    marker = tmp_path / "marker"
    path = evil_checkpoint(tmp_path, {"model": RunsCode(marker)})
    with pytest.raises(pickle.UnpicklingError, match="asks for .*weights-only load does not run"):
        torch.load(path)
    assert not marker.exists()
    with pytest.raises(pickle.UnpicklingError, match="asks for .*RunsCode"):
        torch.load(evil_checkpoint(tmp_path, RunsCode))
    with pytest.raises(NotImplementedError, match="never does"):
        torch.load(STORED, weights_only=False)


def test_broken_and_legacy_files_say_what_they_are(tmp_path):
    (tmp_path / "zip.pt").write_bytes(b"PK\x03\x04" + bytes(60))
    with pytest.raises(ValueError, match="not one"):
        torch.load(tmp_path / "zip.pt")
    (tmp_path / "old.pt").write_bytes(b"\x80\x02}q\x00.")
    with pytest.raises(ValueError, match="legacy format"):
        torch.load(tmp_path / "old.pt")
    (tmp_path / "junk.pt").write_bytes(b"hello")
    with pytest.raises(ValueError, match="neither a PyTorch checkpoint nor a safetensors file"):
        torch.load(tmp_path / "junk.pt")
    truncated = STORED.read_bytes()
    with zipfile.ZipFile(io.BytesIO(truncated)) as archive:
        entries = {i.filename: archive.read(i.filename) for i in archive.infolist()}
    entries["pytorch_checkpoint/data/0"] = entries["pytorch_checkpoint/data/0"][:-4]
    short = tmp_path / "short.pt"
    with zipfile.ZipFile(short, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    with pytest.raises(pickle.UnpicklingError, match="truncated"):
        torch.load(short)


def test_save_refuses_what_a_checkpoint_cannot_hold(tmp_path):
    with pytest.raises(TypeError, match="cannot save a object at 'x'"):
        torch.save({"x": object()}, tmp_path / "bad.pt")
    with pytest.raises(TypeError, match="dict keys"):
        torch.save({(1, 2): 3}, tmp_path / "bad.pt")
    with pytest.raises(TypeError, match="complex128"):
        torch.save({"z": np.ones(2, dtype=complex)}, tmp_path / "bad.pt")
    assert not (tmp_path / "bad.pt").exists()                      # nothing half-written


def test_the_written_archive_has_pytorchs_layout(tmp_path):
    torch.save({"w": Tensor(np.ones((2, 2), dtype=np.float32))}, tmp_path / "ckpt.pt")
    with zipfile.ZipFile(tmp_path / "ckpt.pt") as archive:
        infos = archive.infolist()
        assert [i.filename for i in infos] == ["ckpt/data.pkl", "ckpt/byteorder", "ckpt/data/0", "ckpt/version"]
        assert all(i.compress_type == zipfile.ZIP_STORED for i in infos)
        assert archive.read("ckpt/byteorder") == b"little" and archive.read("ckpt/version") == b"3\n"
        assert archive.read("ckpt/data/0") == np.ones(4, dtype="<f4").tobytes()
    raw = (tmp_path / "ckpt.pt").read_bytes()
    for info in infos:                                             # each record's data starts on 64 bytes
        start = info.header_offset + 30 + len(info.filename) + int.from_bytes(raw[info.header_offset + 28:
                                                                                  info.header_offset + 30], "little")
        assert start % 64 == 0


def test_safetensors_files_still_round_trip(tmp_path):
    torch.save({"w": torch.arange(3)}, tmp_path / "m.safetensors")
    assert (tmp_path / "m.safetensors").read_bytes()[:1] != b"P"
    assert torch.load(tmp_path / "m.safetensors")["w"].tolist() == [0, 1, 2]


# ---------------------------------------------------------------- against PyTorch

def test_pytorch_reads_what_save_writes_with_weights_only(tmp_path):
    real = pytest.importorskip("torch", reason="PyTorch reads our file in this test")
    model = torch.nn.Linear(3, 2)
    opt = torch.optim.AdamW(model.parameters())
    model(torch.ones(4, 3)).sum().backward()
    opt.step()
    ck = {"model": model.state_dict(), "model_args": {"n_layer": 2, "bias": True, "dropout": 0.0, "x": None},
          "iter_num": 30, "best_val_loss": torch.tensor(1.25), "betas": (0.9, 0.95), "ids": torch.arange(4),
          "big": -(2 ** 40), "f64": Tensor(np.array([0.1, 1e-300]))}
    torch.save(ck, tmp_path / "ckpt.pt")
    theirs = real.load(tmp_path / "ckpt.pt", weights_only=True)
    for key, value in model.state_dict().items():
        np.testing.assert_array_equal(theirs["model"][key].numpy(), np.asarray(value))
    assert theirs["model_args"] == ck["model_args"] and theirs["iter_num"] == 30 and theirs["big"] == -(2 ** 40)
    assert theirs["best_val_loss"].item() == 1.25 and theirs["betas"] == (0.9, 0.95)
    assert theirs["ids"].dtype == real.int64 and theirs["f64"].dtype == real.float64
    assert theirs["f64"].tolist() == [0.1, 1e-300]
    twin = real.nn.Linear(3, 2)
    twin.load_state_dict(theirs["model"])                          # PyTorch's own model takes our state_dict


def test_we_read_what_pytorch_writes(tmp_path):
    real = pytest.importorskip("torch", reason="PyTorch writes the file in this test")
    theirs = real.nn.Sequential(real.nn.Linear(3, 4), real.nn.LayerNorm(4))
    opt = real.optim.AdamW(theirs.parameters())
    theirs(real.ones(2, 3)).sum().backward()
    opt.step()
    real.save({"model": theirs.state_dict(), "optimizer": opt.state_dict(), "iter_num": 5}, tmp_path / "ckpt.pt")
    ck = torch.load(tmp_path / "ckpt.pt", map_location="cpu")
    ours = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.LayerNorm(4))
    ours.load_state_dict(ck["model"])
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(ours(torch.tensor(x)).numpy(), theirs(real.tensor(x)).detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    assert ck["iter_num"] == 5 and ck["optimizer"]["param_groups"][0]["betas"] == (0.9, 0.999)
    assert set(ck["optimizer"]["state"][0]) == {"step", "exp_avg", "exp_avg_sq"}

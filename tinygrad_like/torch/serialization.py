"""torch.save / torch.load: PyTorch's own checkpoint format both ways, and safetensors; loading never runs code.

save(obj, f) writes PyTorch's zip format (see _checkpoint_zip.py), which PyTorch's
`torch.load(f, weights_only=True)` reads; to a path ending in .safetensors it writes a safetensors file
instead. What can be saved: a Tensor, or dicts, lists and tuples holding Tensors (or numpy arrays),
numbers, strings, booleans and None, nested as deep as you like: a state_dict, an optimizer's state_dict,
nanoGPT's checkpoint {"model": ..., "optimizer": ..., "model_args": {...}, "iter_num": 30, ...}.

load(f) reads, whatever the file's name:
- PyTorch's zip format (torch.save since PyTorch 1.6, and save here), as weights_only=True does: tensors
  and plain containers only; a pickle naming anything else (a class of the program) is refused unrun;
- a safetensors file written by save here (its structure in the metadata), or a plain one of weights
  (Hugging Face, safetensors.torch.save_file), which loads as {name: Tensor}.
PyTorch's legacy format (a bare pickle, before 1.6) is refused with the way to convert it.
"""
from __future__ import annotations

import json
import os

import numpy as np
import safetensors.numpy

from nn.state import _read_metadata
from tinygrad_like import Tensor
from tinygrad_like.atomic_file import write_atomic
from tinygrad_like.torch import _checkpoint_zip

_KEY = "tinygrad_like.torch"  # the safetensors metadata entry holding the structure
_ARRAY = "__tensor__"


def _pack(obj, path: str, arrays: dict):
    """obj with every Tensor/array moved into `arrays` under its path and replaced by {"__tensor__": path}."""
    if isinstance(obj, (Tensor, np.ndarray)):
        arrays[path] = np.asarray(obj.numpy() if isinstance(obj, Tensor) else obj, order="C")  # 0-d stays 0-d
        return {_ARRAY: path}
    if isinstance(obj, dict):
        if not all(isinstance(k, (str, int)) for k in obj):
            raise TypeError(f"save: dict keys must be strings or ints, got {[type(k).__name__ for k in obj]}")
        return {"dict": [[k, _pack(v, f"{path}.{k}" if path else str(k), arrays)] for k, v in obj.items()]}
    if isinstance(obj, (list, tuple)):
        items = [_pack(v, f"{path}.{i}" if path else str(i), arrays) for i, v in enumerate(obj)]
        return {"tuple" if isinstance(obj, tuple) else "list": items}
    if isinstance(obj, np.generic):
        return obj.item()
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    raise TypeError(f"save: cannot save a {type(obj).__name__} at '{path or 'the top'}': safetensors files hold "
                    "tensors, and the structure around them may hold dicts, lists, numbers and strings only "
                    "(no pickled objects)")


def _unpack(obj, arrays: dict):
    if isinstance(obj, dict):
        if _ARRAY in obj:
            return Tensor(arrays[obj[_ARRAY]])
        if "dict" in obj:
            return {k: _unpack(v, arrays) for k, v in obj["dict"]}
        items = [_unpack(v, arrays) for v in obj.get("list", obj.get("tuple", []))]
        return tuple(items) if "tuple" in obj else items
    return obj


def _safetensors(obj) -> bytes:
    arrays = {}
    structure = _pack(obj, "", arrays)
    return safetensors.numpy.save(arrays, metadata={"format": "pt", _KEY: json.dumps(structure)})


def save(obj, f, pickle_module=None, pickle_protocol: int = 2, _use_new_zipfile_serialization: bool = True,
         _disable_byteorder_record: bool = False) -> None:
    """Write `obj` to `f` (a path, written atomically, or a binary file object) in PyTorch's zip format, or as
    safetensors when the path ends in .safetensors."""
    if pickle_module is not None or not _use_new_zipfile_serialization:
        raise NotImplementedError("tinygrad_like.torch: save writes PyTorch's zip format with its own pickle writer; "
                                  "pickle_module= and the legacy format are not provided")
    path = os.fspath(f) if isinstance(f, (str, os.PathLike)) else None
    if path is not None and path.endswith(".safetensors"):
        data = _safetensors(obj)
    else:
        data = _checkpoint_zip.write(obj, _checkpoint_zip.folder_for(f))
    if path is not None:
        write_atomic(path, data)
    else:
        f.write(data)


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Read what save wrote, a PyTorch checkpoint or a safetensors file (see the module docstring); Tensors come
    back as engine Tensors on the CPU. weights_only=False is refused: this load never runs pickled code."""
    if weights_only is False:
        raise NotImplementedError("tinygrad_like.torch: load(weights_only=False) would run the file's pickled code, "
                                  "which this load never does; it reads tensors and plain containers only (what "
                                  "weights_only=True reads)")
    name = os.fspath(f) if isinstance(f, (str, os.PathLike)) else getattr(f, "name", "the file")
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as file:
            data = file.read()
    else:
        data = f.read()
    if _checkpoint_zip.is_zip_checkpoint(data):
        return _checkpoint_zip.read(data, name)
    if data[:1] == b"\x80":
        raise ValueError(f"load: {name} is in PyTorch's legacy format (a bare pickle, before PyTorch 1.6), which "
                         "this load does not read. Re-save it once with PyTorch: "
                         f"`import torch; torch.save(torch.load({name!r}), 'new.pt')`, then load 'new.pt' here.")
    try:
        arrays, metadata = safetensors.numpy.load(data), _read_metadata(data)
    except Exception as e:
        raise ValueError(f"load: {name} is neither a PyTorch checkpoint nor a safetensors file (truncated or of "
                         f"another format?): {e}") from e
    if _KEY not in metadata:
        return {key: Tensor(array) for key, array in arrays.items()}
    return _unpack(json.loads(metadata[_KEY]), arrays)

"""torch.save / torch.load on safetensors, never pickle: loading a file cannot run code.

What can be saved: a Tensor, or dicts, lists and tuples holding Tensors (or numpy arrays), numbers,
strings, booleans and None, nested as deep as you like: a state_dict, an optimizer's state_dict, a
checkpoint dict {"model": ..., "optim": ..., "step": 10}. The arrays go into the safetensors file under
their paths (`model.net.0.weight`); the structure, with every array replaced by its key, goes into
the file's metadata as JSON. A pickled PyTorch file (torch.save's own format) is refused with the
recipe to convert it.
"""
from __future__ import annotations

import json
import os

import numpy as np
import safetensors.numpy

from nn.state import _atomic_write, _read_metadata
from tinygrad_like import Tensor

_KEY = "tinygrad_like.torch"  # the metadata entry holding the structure
_ARRAY = "__tensor__"


def _pack(obj, path: str, arrays: dict):
    """obj with every Tensor/array moved into `arrays` under its path and replaced by {"__tensor__": path}."""
    if isinstance(obj, (Tensor, np.ndarray)):
        arrays[path] = np.asarray(obj._data if isinstance(obj, Tensor) else obj, order="C")  # 0-d stays 0-d
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


def save(obj, f, **kwargs) -> None:
    """Write `obj` to `f` (a path, written atomically, or a binary file object) as safetensors."""
    arrays = {}
    structure = _pack(obj, "", arrays)
    data = safetensors.numpy.save(arrays, metadata={"format": "pt", _KEY: json.dumps(structure)})
    if isinstance(f, (str, os.PathLike)):
        _atomic_write(os.fspath(f), data)
    else:
        f.write(data)


def _pickled(data: bytes) -> bool:
    """torch.save's format: a zip archive (since PyTorch 1.6) or a bare pickle (protocol byte 0x80)."""
    return data[:4] == b"PK\x03\x04" or data[:1] == b"\x80"


def load(f, map_location=None, weights_only=None, mmap=None, **kwargs):
    """Read what `save` wrote (Tensors come back as engine Tensors). A plain safetensors file of
    weights (e.g. from Hugging Face or safetensors.torch.save_file) loads as {name: Tensor}."""
    name = os.fspath(f) if isinstance(f, (str, os.PathLike)) else getattr(f, "name", "the file")
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as file:
            data = file.read()
    else:
        data = f.read()
    if _pickled(data):
        raise ValueError(f"load: {name} is a pickled PyTorch file (torch.save's format). tinygrad_like never "
                         "unpickles, because unpickling can run any code. Convert it once with real PyTorch: "
                         "`import torch; from safetensors.torch import save_file; "
                         f"save_file(torch.load({name!r}), 'model.safetensors')` (for a state_dict), then "
                         "load 'model.safetensors' here.")
    try:
        arrays, metadata = safetensors.numpy.load(data), _read_metadata(data)
    except Exception as e:
        raise ValueError(f"load: {name} is not a safetensors file (truncated or of another format?): {e}") from e
    if _KEY not in metadata:
        return {key: Tensor(array) for key, array in arrays.items()}
    return _unpack(json.loads(metadata[_KEY]), arrays)

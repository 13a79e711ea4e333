"""PyTorch's checkpoint format (torch.save since PyTorch 1.6), read without running pickled code and written
so that PyTorch's `torch.load(path, weights_only=True)` reads it.

The file is a zip archive (entries stored, not compressed) under one folder:

    <folder>/data.pkl     the object, pickled (protocol 2); each tensor in it is a call
                          torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)
                          whose storage is a persistent id ('storage', torch.FloatStorage, key, 'cpu', numel)
    <folder>/data/<key>   each storage's bytes, little-endian
    <folder>/byteorder    "little"
    <folder>/version      "3"

Reading: a restricted unpickler, as PyTorch's weights_only=True, admits the tensor rebuilds, the storage
types, collections.OrderedDict and torch.Size, and the containers and scalars pickle builds itself (dict,
list, tuple, str, int, float, bool, None). Any other name in the pickle (a class of the program, a
function) is refused before anything runs. Tensors come back as engine Tensors, copied from their storage
(a storage shared by two tensors, as tied weights, is read once). float16/bfloat16 storages are refused:
the engine does not compute in them.

Writing: the pickle is written opcode by opcode here (the program never imports PyTorch), for the same
content: dicts (str or int keys), lists, tuples, str, int, float, bool, None, Tensors and numpy arrays
(saved as tensors); a tensor object saved twice is one storage, as PyTorch does.
"""
from __future__ import annotations

import collections
import io
import os
import pickle
import struct
import zipfile

import numpy as np

from tinygrad_like import Tensor
from tinygrad_like.torch.nn import Parameter

# PyTorch's legacy storage type names and their dtypes (data/<key> holds numel items of the dtype)
STORAGES = {"FloatStorage": np.float32, "DoubleStorage": np.float64, "LongStorage": np.int64,
            "IntStorage": np.int32, "ShortStorage": np.int16, "CharStorage": np.int8, "ByteStorage": np.uint8,
            "BoolStorage": np.bool_}
REFUSED_STORAGES = {"HalfStorage": "float16", "BFloat16Storage": "bfloat16"}
STORAGE_OF = {np.dtype(dtype): name for name, dtype in STORAGES.items()}
ALIGN = 64  # PyTorch starts each record at a multiple of 64 bytes (so that it can map the file)


def is_zip_checkpoint(data: bytes) -> bool:
    return data[:4] == b"PK\x03\x04"


# ---------------------------------------------------------------- reading

class _Storage:
    """What find_class returns for torch.FloatStorage & co.: the dtype of the storage named in a persistent id."""

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype)


def _rebuild_tensor(storage: np.ndarray, offset: int, size, stride, requires_grad=False, hooks=None, *metadata):
    """torch._utils._rebuild_tensor_v2: the tensor of `size` read from `storage` at `offset`, `stride` in items."""
    size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
    last = offset + sum((n - 1) * s for n, s in zip(size, stride))
    if len(size) != len(stride) or min(stride, default=0) < 0 or offset < 0 or (
            0 not in size and last >= len(storage)):
        raise pickle.UnpicklingError(f"load: a tensor of size {size} and stride {stride} at offset {offset} does not "
                                     f"fit its storage of {len(storage)} items")
    view = np.lib.stride_tricks.as_strided(storage[offset:], shape=size,
                                           strides=tuple(s * storage.itemsize for s in stride))
    return Tensor(np.array(view), requires_grad=bool(requires_grad))


def _rebuild_parameter(data: Tensor, requires_grad: bool, hooks=None, *rest):
    """torch._utils._rebuild_parameter: an nn.Parameter around the rebuilt tensor."""
    return Parameter(data, requires_grad=requires_grad)


class _WeightsOnly(pickle.Unpickler):
    """An unpickler that builds only tensors and plain containers (PyTorch's weights_only=True)."""

    def __init__(self, file, archive: zipfile.ZipFile, folder: str, name: str, byteorder: str):
        super().__init__(file)
        self.archive, self.folder, self.name, self.byteorder = archive, folder, name, byteorder
        self.storages: dict[str, np.ndarray] = {}

    def find_class(self, module: str, name: str):
        allowed = {("collections", "OrderedDict"): collections.OrderedDict,
                   ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor,
                   ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
                   ("torch", "Size"): tuple}
        if (module, name) in allowed:
            return allowed[module, name]
        if module == "torch" and name in STORAGES:
            return _Storage(STORAGES[name])
        if module == "torch" and name in REFUSED_STORAGES:
            raise pickle.UnpicklingError(f"load: {self.name} holds {REFUSED_STORAGES[name]} tensors, which the engine "
                                         "does not compute in; convert them with PyTorch first (.float())")
        raise pickle.UnpicklingError(f"load: {self.name} asks for {module}.{name}, which a weights-only load does not "
                                     "run: only tensors and plain containers (dict, list, tuple, numbers, strings) "
                                     "are read, as PyTorch's torch.load(weights_only=True)")

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage" and isinstance(pid[1], _Storage)):
            raise pickle.UnpicklingError(f"load: {self.name} refers to {pid!r}, which is not a tensor storage")
        _, kind, key, location, numel = pid
        if key not in self.storages:
            data = self.archive.read(f"{self.folder}/data/{key}")
            dtype = kind.dtype.newbyteorder("<" if self.byteorder == "little" else ">")
            if len(data) != numel * dtype.itemsize:
                raise pickle.UnpicklingError(f"load: {self.name}'s storage {key} has {len(data)} bytes, not the "
                                             f"{numel} × {dtype.itemsize} its tensors say (truncated?)")
            self.storages[key] = np.frombuffer(data, dtype=dtype).astype(kind.dtype)  # native order, writable
        return self.storages[key]


def read(data: bytes, name: str):
    """The object in a PyTorch checkpoint's bytes, tensors as engine Tensors."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        pickles = [n for n in archive.namelist() if n.endswith("/data.pkl") and n.count("/") == 1]
    except zipfile.BadZipFile as e:
        raise ValueError(f"load: {name} starts as a zip archive but is not one (truncated?): {e}") from e
    if len(pickles) != 1:
        raise ValueError(f"load: {name} is a zip archive without PyTorch's <folder>/data.pkl: not a checkpoint")
    folder = pickles[0].split("/")[0]
    names = set(archive.namelist())
    byteorder = archive.read(f"{folder}/byteorder").decode().strip() if f"{folder}/byteorder" in names else "little"
    return _WeightsOnly(io.BytesIO(archive.read(pickles[0])), archive, folder, name, byteorder).load()


# ---------------------------------------------------------------- writing

class _Pickle:
    """Protocol-2 pickle opcodes for the content a checkpoint may hold; tensors become _rebuild_tensor_v2 calls."""

    def __init__(self):
        self.out = bytearray(b"\x80\x02")                        # PROTO 2
        self.storages: dict[int, tuple[str, np.ndarray]] = {}     # id of the saved object -> (key, array)

    def global_(self, module: str, name: str) -> None:
        self.out += b"c" + module.encode() + b"\n" + name.encode() + b"\n"

    def dump(self, obj, path: str) -> None:
        if obj is None:
            self.out += b"N"
        elif obj is True or obj is False or isinstance(obj, np.bool_):
            self.out += b"\x88" if obj else b"\x89"
        elif isinstance(obj, (int, np.integer)):
            self.int(int(obj))
        elif isinstance(obj, (float, np.floating)):
            self.out += b"G" + struct.pack(">d", float(obj))
        elif isinstance(obj, str):
            encoded = obj.encode("utf-8", "surrogatepass")
            self.out += b"X" + struct.pack("<I", len(encoded)) + encoded
        elif isinstance(obj, (Tensor, np.ndarray)):
            self.tensor(obj, path)
        elif isinstance(obj, tuple):
            self.out += b"("
            for i, item in enumerate(obj):
                self.dump(item, f"{path}.{i}")
            self.out += b"t"
        elif isinstance(obj, list):
            self.out += b"]("
            for i, item in enumerate(obj):
                self.dump(item, f"{path}.{i}")
            self.out += b"e"
        elif isinstance(obj, dict):
            if not all(isinstance(k, (str, int)) and not isinstance(k, bool) for k in obj):
                raise TypeError(f"save: dict keys must be strings or ints, got {[type(k).__name__ for k in obj]} at "
                                f"'{path or 'the top'}'")
            self.out += b"}("
            for key, value in obj.items():
                self.dump(key, path)
                self.dump(value, f"{path}.{key}" if path else str(key))
            self.out += b"u"
        else:
            raise TypeError(f"save: cannot save a {type(obj).__name__} at '{path or 'the top'}': a checkpoint holds "
                            "tensors in dicts, lists and tuples with numbers, strings, booleans and None (what "
                            "PyTorch's torch.load(weights_only=True) reads), no other objects")

    def int(self, v: int) -> None:
        if 0 <= v < 256:
            self.out += b"K" + bytes([v])
        elif 0 <= v < 65536:
            self.out += b"M" + struct.pack("<H", v)
        elif -2 ** 31 <= v < 2 ** 31:
            self.out += b"J" + struct.pack("<i", v)
        else:                                                      # LONG1: two's complement, little-endian
            encoded = v.to_bytes((v.bit_length() + 8) // 8, "little", signed=True)
            self.out += b"\x8a" + bytes([len(encoded)]) + encoded

    def tensor(self, obj, path: str) -> None:
        array = obj.numpy() if isinstance(obj, Tensor) else obj
        if array.dtype not in STORAGE_OF:
            raise TypeError(f"save: the tensor at '{path or 'the top'}' is {array.dtype}, which a PyTorch checkpoint "
                            f"written here cannot hold (float32/64, int8-64, uint8, bool)")
        if id(obj) not in self.storages:                           # the same object twice: one storage
            self.storages[id(obj)] = (str(len(self.storages)), np.asarray(array, order="C"))  # 0-d stays 0-d
        key, stored = self.storages[id(obj)]
        contiguous = [int(np.prod(stored.shape[i + 1:])) for i in range(stored.ndim)]  # strides in items
        self.global_("torch._utils", "_rebuild_tensor_v2")
        self.out += b"((X" + struct.pack("<I", 7) + b"storage"
        self.global_("torch", STORAGE_OF[stored.dtype])
        self.dump(key, path)
        self.dump("cpu", path)
        self.int(stored.size)
        self.out += b"tQ"                                          # TUPLE, BINPERSID
        self.int(0)
        self.dump(tuple(int(n) for n in stored.shape), path)
        self.dump(tuple(contiguous), path)
        self.out += b"\x89"                                        # requires_grad False, as in a state_dict
        self.global_("collections", "OrderedDict")
        self.out += b")R"                                          # OrderedDict(): no backward hooks
        self.out += b"tR"                                          # the arguments' TUPLE, REDUCE


def _aligned(archive: zipfile.ZipFile, name: str, data: bytes) -> None:
    """Add `name` stored (uncompressed) with its data starting at a multiple of ALIGN bytes, by an extra field."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    start = archive.fp.tell() + 30 + len(name.encode()) + 4         # local header, its name, the extra's header
    padding = -start % ALIGN
    info.extra = struct.pack("<HH", 0x4246, padding) + b"Z" * padding   # 'FB', as PyTorch's writer pads
    archive.writestr(info, data)


def write(obj, folder: str = "archive") -> bytes:
    """`obj` as the bytes of a PyTorch checkpoint whose entries sit under `folder`."""
    pickler = _Pickle()
    pickler.dump(obj, "")
    pickler.out += b"."                                            # STOP
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        _aligned(archive, f"{folder}/data.pkl", bytes(pickler.out))
        _aligned(archive, f"{folder}/byteorder", b"little")
        for key, array in pickler.storages.values():
            _aligned(archive, f"{folder}/data/{key}", array.astype(array.dtype.newbyteorder("<")).tobytes())
        _aligned(archive, f"{folder}/version", b"3\n")
    return buffer.getvalue()


def folder_for(path) -> str:
    """PyTorch's folder name in the archive: the file's name without its extension ("archive" for a stream)."""
    if isinstance(path, (str, os.PathLike)):
        stem = os.path.splitext(os.path.basename(os.fspath(path)))[0]
        return stem or "archive"
    return "archive"

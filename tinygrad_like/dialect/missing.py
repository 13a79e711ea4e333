"""A Tensor attribute that PyTorch has and the engine does not: an error that names it and says so.

`x.stft(...)` on a PyTorch program's tensor would otherwise end in Python's bare "'Tensor' object has
no attribute 'stft'", which reads like a typo in the program. Here it raises `NotInEngine` (an
AttributeError, so `hasattr` and `getattr(x, name, None)` still answer False / None, and a
NotImplementedError, which is what it means) naming the attribute and, where one kind of thing is
missing (devices, sparse or quantized tensors, complex numbers, ...), why. A name PyTorch does not have
keeps Python's own AttributeError.

PyTorch's names are recorded in pytorch_tensor_names.txt, so this works without PyTorch; the file is
written, with docs/torch_names.json, by `python benchmarks/torch_coverage.py --names` (with PyTorch).
"""
from __future__ import annotations

import functools
from pathlib import Path

from tinygrad_like.errors import NotInEngine

NAMES = Path(__file__).with_name("pytorch_tensor_names.txt")

# (names, or prefixes ending in "*", why the engine has none); the first that matches says why
_KINDS = (
    ("cuda is_cuda pin_memory is_pinned ipu is_ipu xpu is_xpu mtia is_mtia is_maia is_mps is_vulkan is_xla is_meta "
     "record_stream get_device to_mkldnn is_mkldnn is_distributed", "the engine runs on the CPU only"),
    ("*sparse* to_sparse* coalesce is_coalesced indices values crow_indices col_indices ccol_indices row_indices "
     "to_dense dense_dim smm sspaddmm", "dense numpy arrays only"),
    ("q_* qscheme is_quantized int_repr dequantize", "no quantized tensors"),
    ("imag cfloat cdouble chalf", "no complex numbers"),
    ("names rename rename_ refine_names align_as align_to has_names", "no named tensors"),
    ("storage storage_offset storage_type untyped_storage set_ is_set_to share_memory_ is_shared as_strided* stride "
     "resize_* resize new_empty_strided is_nested to_padded_tensor dim_order layout nonzero_static",
     "a tensor's memory is one numpy array: no storages, strides or nested tensors"),
    ("half bfloat16 float8*", "float32 and float64 only"),
    ("cholesky* qr svd lu lu_solve pinverse eig symeig geqrf orgqr ormqr lstsq solve triangular_solve matrix_exp",
     "no matrix decompositions or solvers (svd, qr, cholesky, eig, lu, lstsq, pinverse, ...): the engine's linear "
     "algebra is products (matmul, kron, tensordot, ...), inverse, det, slogdet and matrix_power"),
    ("stft istft", "no Fourier transforms"),
    ("slice_inverse", "an internal op of PyTorch's functionalization (the base tensor a slice is a view of): a "
     "tensor here is its own numpy array, with no views to invert; slice_scatter writes a slice into a tensor"),
    ("index", "it binds dimensions to functorch's first-class Dim objects, which the engine does not have; "
     "index with x[...]"),
    ("igamma igamma_ igammac igammac_", "no incomplete gamma functions: numpy has no exact form of them (erf, "
     "erfc, erfinv, lgamma, digamma, polygamma and i0 are here)"),
    ("register_hook register_post_accumulate_grad_hook retains_grad output_nr reinforce volatile grad_dtype "
     "module_load map_ map2_ apply_ hash_tensor as_subclass",
     "outside the engine's autograd and Python object model"),
)


def _matches(name: str, pattern: str) -> bool:
    if pattern.startswith("*") and pattern.endswith("*"):
        return pattern[1:-1] in name
    return name.startswith(pattern[:-1]) if pattern.endswith("*") else name == pattern


@functools.cache
def pytorch_names() -> frozenset:
    """torch.Tensor's public names, as recorded."""
    return frozenset(line.strip() for line in NAMES.read_text().splitlines() if line.strip() and line[0] != "#")


def reason(name: str) -> str:
    """Why the engine has no Tensor.`name` (a name PyTorch's Tensor has)."""
    for patterns, why in _KINDS:
        if any(_matches(name, p) for p in patterns.split()):
            return why
    return "not in the engine yet"


class NotInEngineName:
    """On Tensor, in place of a name PyTorch's Tensor has and ours does not: reading it (on a tensor or on
    the class) raises NotInEngine, naming it and why. A descriptor per name rather than a
    `Tensor.__getattr__`: a class with `__getattr__` makes Python look up every attribute of every
    tensor the slow way (CPython does not specialize attribute reads on such a class), which cost about
    a microsecond per op."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __get__(self, obj, owner=None):
        raise NotInEngine(f"Tensor.{self.name}: PyTorch's Tensor has it, tinygrad_like's does not "
                          f"({reason(self.name)}). See docs/pytorch.md.")


def mark_missing(cls) -> None:
    """Put a NotInEngineName on `cls` for every recorded PyTorch name it does not have. Run last, after
    every other attachment; a name PyTorch does not have keeps Python's own AttributeError."""
    for name in pytorch_names():
        if not any(name in vars(c) for c in cls.__mro__):
            setattr(cls, name, NotInEngineName(name))


class Missing:
    """What `dir()` lists: the names a tensor has, not the names marked missing."""

    def __dir__(self):
        return [n for n in object.__dir__(self) if not isinstance(_class_attr(type(self), n), NotInEngineName)]


def _class_attr(cls, name: str):
    for c in cls.__mro__:
        if name in vars(c):
            return vars(c)[name]
    return None


def names_file(names, version: str) -> str:
    """The text of pytorch_tensor_names.txt for torch.Tensor's `names` in PyTorch `version`."""
    return (f"# torch.Tensor's public names (dir() without underscores), PyTorch {version}; written by "
            "python benchmarks/torch_coverage.py --names\n" + "\n".join(sorted(names)) + "\n")

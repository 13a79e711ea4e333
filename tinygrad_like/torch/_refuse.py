"""What the facade says about a PyTorch name the engine does not provide, and about devices.

A missing name raises `NotInEngine`, which names it (`tinygrad_like.torch has no torch.fft`) and is
both a NotImplementedError (what the message means) and an AttributeError (so `hasattr(torch, "fft")`
and `getattr(torch, "compile", None)`, which scripts use to probe features, still answer False / None).

Why a name is refused comes from REFUSED (one name) or else from CATEGORIES: kinds of PyTorch's surface
the engine leaves out on purpose (devices, sparse and quantized tensors, the compiler, convolutions, ...),
each a pattern over the name and one reason, so a new PyTorch name of a known kind is answered without a
new line here. benchmarks/torch_coverage.py counts the names each answers (docs/torch_coverage.md).
"""
from __future__ import annotations

import re

from tinygrad_like.dialect import missing
from tinygrad_like.errors import NotInEngine  # noqa: F401  (raised here, defined beside the engine's errors)

# Names scripts commonly reach for, with why the engine has none (shown in the message and in docs/pytorch.md).
REFUSED = {
    "torch.compile": "the engine runs every op eagerly in numpy; there is no compiler",
    "torch.jit": "no TorchScript: models are plain Python here",
    "torch.fft": "no Fourier transforms",
    "torch.linalg": ("no torch.linalg: the engine's linear algebra is torch's products (matmul, kron, tensordot, "
                     "...), torch.inverse, det, slogdet, logdet and matrix_power; no decompositions or solvers"),
    "torch.sparse": "dense numpy arrays only",
    "torch.complex64": "no complex dtypes",
    "torch.set_default_dtype": "Python floats always become float32; pass dtype= or call model.double()",
    "torch.nn.utils.rnn": "no packed sequences: nn.RNN, nn.LSTM and nn.GRU take padded (L, N, features) batches; "
                          "pad the sequences and mask or pick the steps past each length yourself",
    "torch.nn.Conv2d": "no convolutions",
    "torch.nn.Conv1d": "no convolutions",
    "torch.nn.MaxPool2d": "no pooling layers",
    "torch.optim.LBFGS": "SGD, Adam and AdamW only",
    "torch.ModuleDict": "TorchScript's C++ binding for a scripted module's submodules; torch.nn.ModuleDict is the "
                        "container models use",
    "torch.ParameterDict": "TorchScript's C++ binding for a scripted module's parameters; torch.nn.ParameterDict is "
                           "the container models use",
    "torch.BufferDict": "TorchScript's C++ binding for a scripted module's buffers; a Module's buffers are in its "
                        "state_dict",
    "torch.FatalError": "an error of PyTorch's C++ runtime; the engine raises Python's own errors",
    "torch.PyTorchFileReader": "PyTorch's C++ reader of its zip checkpoints; torch.load reads them here, in Python "
                               "(tinygrad_like/torch/_checkpoint_zip.py)",
    "torch.PyTorchFileWriter": "PyTorch's C++ writer of its zip checkpoints; torch.save writes them here, in Python "
                               "(tinygrad_like/torch/_checkpoint_zip.py)",
    "torch.SerializationStorageContext": "PyTorch's C++ bookkeeping of storages while saving; torch.save here "
                                         "writes each tensor's array",
    "torch.DeserializationStorageContext": "PyTorch's C++ bookkeeping of storages while loading; torch.load here "
                                           "reads each tensor's array",
    "torch.cond": "control flow captured for torch.compile and torch.export; the engine runs Python's own if",
    "torch.optim.RMSprop": "SGD, Adam and AdamW only",
    "torch.slice_inverse": ("an internal op of PyTorch's functionalization (the base tensor a slice is a view of): a "
                            "tensor here is its own numpy array, with no views to invert; torch.slice_scatter writes "
                            "a slice into a tensor"),
}


_ONE_CPU = "not in this engine: it runs on one CPU with numpy, with no GPU or other device"
_TRANSFORMER_LAYERS = ("no convolution, pooling, resampling or other image layers: the engine's layers are a "
                       "transformer's and an MLP's")

# (namespaces the pattern applies to, a regex searched in the name's last part, why). First match wins.
CATEGORIES = [
    (("torch", "torch.Tensor", "torch.nn", "torch.nn.functional", "torch.utils.data"),
     r"cuda|cudnn|miopen|mkldnn|^mps|xpu|vulkan|mtia|ipu|xla|hpu|accelerator|^Stream|^Event$|OutOfMemoryError|"
     r"AcceleratorError|get_device|default_device|pin_memory|is_pinned", _ONE_CPU),
    (("torch", "torch.Tensor", "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.optim"),
     r"sparse|Sparse|_coo|coo_|csr|csc|bsr|bsc|spmm|^smm$|^hspmm$|^dsmm$|^hsmm$|saddmm|^sspaddmm$|crow_indices|col_indices|"
     r"row_indices|^indices|^values_copy|to_dense|is_coalesced|coalesce|dense_dim",
     "dense numpy arrays only: no sparse tensors"),
    (("torch", "torch.Tensor"), r"quant(?!ile)|^q_|qint|quint|qscheme|fbgemm|int_repr|dequantize|qparams",
     "no quantized tensors: the engine computes in float32 and float64"),
    (("torch", "torch.Tensor", "torch.nn", "torch.utils.data"),
     r"distributed|Distributed|SyncBatchNorm|rpc|RRef|^fork$|^wait$|^Future|share_memory|is_shared",
     "one process on one CPU: nothing to distribute or share between processes"),
    (("torch", "torch.Tensor"),
     r"Storage$|^storage|^is_storage|^from_file$|^layout$|memory_format|^empty_strided|as_strided|^stride$|"
     r"^set_$|^data_ptr|^untyped_storage|^_?nbytes|^itemsize$|^resize|^is_set_to|^storage_offset|"
     r"^has_lapack|^has_mkl|^has_openmp|^has_spectral|interop_threads|^init_num_threads",
     "no storages or memory layouts of its own: a tensor is a numpy array (torch.save/load read and write "
     "PyTorch's storages)"),
    (("torch", "torch.Tensor"),
     r"complex|^cfloat$|^cdouble$|^chalf$|view_as_real|view_as_complex|conj|^angle$|^polar$|^real$|^imag$|"
     r"resolve_neg|^is_neg$|^sgn",
     "no complex dtypes"),
    (("torch", "torch.Tensor", "torch.nn.functional"),
     r"^jit|Script|script|TracingState|^compile|Compil|Graph|^Node$|^Block$|^Value$|^Use$|AliasDb|ArgumentSpec|"
     r"ExecutionPlan|^Gradient$|FileCheck|parse_ir|parse_schema|parse_type_comment|import_ir_module|"
     r"merge_type_from_type_comment|unify_type_list|FunctionSchema|\wType$|^Type$|^Argument$|InferredType|"
     r"ConcreteModuleType|CallStack|ErrorReport|JITException|^Code$|StaticModule|DeepCopyMemoTable|Capsule|^Tag$|"
     r"OperatorInfo|Dispatch|DisableTorchFunction|torch_function|boolean_dispatch|vmap|^sym_|^Sym|Benchmark|"
     r"LockingLogger|NoopLogger|IODescriptor|^AVG$|^SUM$|AggregationType|^fx|^export|_copy$|^native_|^unsafe_|"
     r"thread_safe_generator|hash_tensor|Logger|^grouped_mm|^scaled_grouped_mm|^scaled_mm|ScalingType|SwizzleType",
     "part of PyTorch's compiler and dispatcher (TorchScript, FX, torch.compile, their copies of ops): the "
     "engine runs each op eagerly in numpy"),
    (("torch", "torch.Tensor"),
     r"^float8|^float4|^bits|^bit$|^u?int[1-7]$|^uint(16|32|64)$|^bfloat16$|^half$|^float16$",
     "no such dtype: the engine computes in float32 or float64 (integers and bools for indices and masks)"),
    (("torch", "torch.nn", "torch.nn.functional"),
     r"[Cc]onv|[Pp]ool|pad_nd|interpolate|[Uu]psampl|grid_sample|affine_grid|^Fold$|^fold$|^Unfold$|unfold$",
     _TRANSFORMER_LAYERS),
    (("torch",), r"^lstm|^gru|^rnn_|^quantized_(lstm|gru|rnn)",
     "PyTorch's internal operator behind nn.RNN, nn.LSTM and nn.GRU: use the layers (or their cells)"),
    (("torch", "torch.Tensor"),
     r"linalg|^pinverse|^svd|^qr$|cholesky|^eig|lstsq|^lu|^matrix_exp|triangular_solve|^orgqr|^ormqr|^geqrf|"
     r"^lobpcg|nuclear_norm",
     "no matrix decompositions or solvers (svd, qr, cholesky, eig, lu, lstsq, pinverse, ...): the engine's linear "
     "algebra is products (matmul, kron, tensordot, ...), inverse, det, slogdet and matrix_power"),
    (("torch", "torch.Tensor"), r"fft|^stft$|^istft$|_window$", "no Fourier transforms or signal windows"),
    (("torch",), r"^igammac?_?$", "no incomplete gamma functions: numpy has no exact form of them (erf, erfc, "
     "erfinv, lgamma, digamma, polygamma and i0 are here)"),
    (("torch.nn",), r"^Lazy|^Uninitialized", "no lazy modules: give each layer its sizes"),
    (("torch",), r"^batch_norm_|^embedding_bag$",
     "PyTorch's internal operator behind a layer, returning its statistics and bookkeeping tensors too: call "
     "F.batch_norm or F.embedding_bag"),
    (("torch", "torch.Tensor"), r"autocast", "no mixed precision: float32 or float64 throughout"),
    (("torch.optim",), r"^[A-Z]|swap_in_optimizer",
     "SGD, Adam and AdamW only (nn/optim.py's optimizers, the ones the book derives)"),
    (("torch.optim.lr_scheduler",), r"^[A-Z]",
     "LambdaLR, StepLR, CosineAnnealingLR and OneCycleLR only: LambdaLR writes any schedule as a function of the step"),
    (("torch.nn.init",), r"^(constant|kaiming_normal|kaiming_uniform|normal|uniform|xavier_normal|xavier_uniform)$",
     "PyTorch's deprecated spelling: use the one ending in an underscore (normal_, ...)"),
    (("torch.nn.init",), r"^(dirac|eye|orthogonal|sparse)",
     "no such initializer here: normal_, uniform_, trunc_normal_, xavier_*, kaiming_*, zeros_, ones_, constant_ are"),
    (("torch.utils.data",),
     r"DataPipe|datapipe|DataChunk|runtime_validation|argument_validation|non_deterministic",
     "torchdata's DataPipes are not provided: use Dataset and DataLoader"),
]


def reason(qualified: str) -> str | None:
    """Why the engine has no `qualified` (e.g. "torch.fft"), or None when nobody has said. A Tensor
    attribute's reason is the dialect's (tinygrad_like/dialect/missing.py), which its error shows; a module's
    name has its own line in REFUSED, or else the first of CATEGORIES whose namespaces hold it and whose
    pattern its last part matches."""
    if qualified.startswith("torch.Tensor."):
        name = qualified.removeprefix("torch.Tensor.")
        return missing.reason(name) if name in missing.pytorch_names() else None
    if qualified in REFUSED:
        return REFUSED[qualified]
    namespace, _, name = qualified.rpartition(".")
    for namespaces, pattern, why in CATEGORIES:
        if namespace in namespaces and re.search(pattern, name):
            return why
    return None


def refuse(qualified: str) -> NotInEngine:
    """The error for a missing name, e.g. refuse("torch.fft") (raise it)."""
    why = reason(qualified)
    return NotInEngine(f"tinygrad_like.torch has no {qualified}" + (f" ({why})" if why else "")
                       + ": the engine does not provide it. See docs/pytorch.md.")


def module_getattr(prefix: str):
    """A module-level __getattr__ that refuses every name it is asked for (Python calls it only for
    names the module does not have)."""
    def __getattr__(name: str):
        if name.startswith("__"):
            raise AttributeError(name)  # Python's own probes (__path__, __wrapped__, ...) stay ordinary
        raise refuse(f"{prefix}.{name}")
    return __getattr__


def check_device(device, op: str = "") -> None:
    """Accept None, "cpu" or a cpu device; anything else says the engine runs on the CPU."""
    if device is None:
        return
    kind = str(device.type if hasattr(device, "type") else device).split(":")[0]
    if kind != "cpu":
        raise RuntimeError(f"{op + ': ' if op else ''}device '{device}' is not available: tinygrad_like runs on "
                           "the CPU (numpy). Use device='cpu' or leave it out (torch.cuda.is_available() "
                           "and torch.backends.mps.is_available() are False here).")

"""PyTorch's names on the tinygrad_like engine: `import tinygrad_like.torch as torch`.

Every name maps onto the engine: torch.Tensor is the engine's Tensor, torch.nn's layers are nn/'s,
torch.optim's optimizers are nn/optim's, and the functions call the engine's Tensor methods. The facade
holds no math of its own, so a PyTorch-style model run through it is our engine's graph: `draw_graph`,
`backprop_steps` and `gradcheck` work on it, with the model's state_dict names on the boxes.

Two ways in:
    import tinygrad_like.torch as torch          # in your own code
    python -m tinygrad_like.torch script.py ...  # an unmodified PyTorch script (`import torch` resolves here)
`install()` makes later `import torch` statements (in a notebook) resolve here too.

A name the engine does not provide raises NotInEngine (a NotImplementedError, and an AttributeError so
`hasattr` answers False) naming it: `tinygrad_like.torch has no torch.fft`. CUDA and MPS are never
available; asking for them says the engine runs on the CPU. `supported_names()` lists what there is.
Importing it makes tensors and shapes print as PyTorch's (`tensor([1., 2.])`, `torch.Size([2])`,
tinygrad_like/dialect/printing.py); `use_pytorch_printing(False)` gives the engine's printing back.
"""
from tinygrad_like import Tensor
from tinygrad_like.dialect.printing import use_pytorch_printing
from tinygrad_like.torch import _dtypes, _functions, _nn_functions, _refuse, _settings, _tensor_types, _tensors
from tinygrad_like.torch._dtypes import can_cast, dtype, finfo, iinfo, promote_types, result_type, typename
from tinygrad_like.torch._importer import install, uninstall
from tinygrad_like.torch._names import supported_names
from tinygrad_like.torch._tensor_types import (
    BFloat16Tensor,
    BoolTensor,
    ByteTensor,
    CharTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
)
from tinygrad_like.torch._tensors import (
    Generator,
    Size,
    arange,
    as_tensor,
    asarray,
    bernoulli,
    bfloat16,
    binomial,
    bool,
    default_generator,
    device,
    double,
    e,
    empty,
    empty_like,
    empty_permuted,
    enable_grad,
    eye,
    float,
    float16,
    float32,
    float64,
    from_numpy,
    frombuffer,
    full,
    full_like,
    get_default_dtype,
    get_rng_state,
    half,
    inf,
    inference_mode,
    initial_seed,
    int,
    int8,
    int16,
    int32,
    int64,
    is_grad_enabled,
    is_tensor,
    linspace,
    logspace,
    long,
    manual_seed,
    multinomial,
    nan,
    newaxis,
    no_grad,
    normal,
    numel,
    ones,
    ones_like,
    pi,
    poisson,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    range,
    scalar_tensor,
    seed,
    set_grad_enabled,
    set_rng_state,
    short,
    tensor,
    uint8,
    zeros,
    zeros_like,
)
from tinygrad_like.torch.serialization import load, save

globals().update(_functions.FUNCTIONS)
globals().update(_nn_functions.NN_FUNCTIONS)
globals().update({name: getattr(_settings, name) for name in _settings.__all__})

from tinygrad_like.torch import amp, autograd, backends, cuda, distributed, nn, optim, utils  # noqa: E402 (they import the names above)
from tinygrad_like.torch.amp import GradScaler, autocast  # noqa: E402

use_pytorch_printing()   # tensors and shapes print as PyTorch's, for a script run through the facade

__getattr__ = _refuse.module_getattr("torch")
__version__ = "2.0.0+tinygrad_like"  # what scripts that compare versions see: the PyTorch 2 API

__all__ = ["Tensor", *_tensors.__all__, *_tensor_types.__all__, *_functions.FUNCTIONS, *_nn_functions.NN_FUNCTIONS,
           *_dtypes.__all__, *_settings.__all__, "save", "load", "autograd", "nn", "optim", "utils", "cuda",
           "backends", "amp", "distributed", "autocast", "GradScaler", "install", "uninstall", "supported_names"]

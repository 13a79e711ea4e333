"""What the facade says about a PyTorch name the engine does not provide, and about devices.

A missing name raises `NotInEngine`, which names it (`tinygrad_like.torch has no torch.fft`) and is
both a NotImplementedError (what the message means) and an AttributeError (so `hasattr(torch, "fft")`
and `getattr(torch, "compile", None)`, which scripts use to probe features, still answer False / None).
"""
from __future__ import annotations

from tinygrad_like.dialect import missing
from tinygrad_like.errors import NotInEngine  # noqa: F401  (raised here, defined beside the engine's errors)

# Names scripts commonly reach for, with why the engine has none (shown in the message and in docs/pytorch.md).
REFUSED = {
    "torch.compile": "the engine runs every op eagerly in numpy; there is no compiler",
    "torch.jit": "no TorchScript: models are plain Python here",
    "torch.fft": "no Fourier transforms",
    "torch.linalg": "no linear algebra beyond matmul",
    "torch.sparse": "dense numpy arrays only",
    "torch.complex64": "no complex dtypes",
    "torch.set_default_dtype": "Python floats always become float32; pass dtype= or call model.double()",
    "torch.nn.Conv2d": "no convolutions",
    "torch.nn.Conv1d": "no convolutions",
    "torch.nn.MaxPool2d": "no pooling layers",
    "torch.nn.BatchNorm2d": "BatchNorm1d only",
    "torch.nn.LSTM": "no recurrent layers",
    "torch.nn.GRU": "no recurrent layers",
    "torch.nn.RNN": "no recurrent layers",
    "torch.nn.MultiheadAttention": "write the heads with nn.Linear and F.scaled_dot_product_attention",
    "torch.optim.LBFGS": "SGD, Adam and AdamW only",
    "torch.optim.RMSprop": "SGD, Adam and AdamW only",
}




def reason(qualified: str) -> str | None:
    """Why the engine has no `qualified` (e.g. "torch.fft"), or None when nobody has said. A Tensor
    attribute's reason is the dialect's (tinygrad_like/dialect/missing.py), which its error shows."""
    if qualified.startswith("torch.Tensor."):
        name = qualified.removeprefix("torch.Tensor.")
        return missing.reason(name) if name in missing.pytorch_names() else None
    return REFUSED.get(qualified)


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

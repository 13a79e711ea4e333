"""torch's global switches that real programs set and query, each mapped onto what the engine does:

- anomaly detection (`set_anomaly_enabled`, `is_anomaly_enabled`; torch.autograd's `detect_anomaly`) is the
  engine's `detect_anomaly` mode (each op's output and gradient checked for NaN and Inf, naming the op);
- determinism (`use_deterministic_algorithms`, the debug mode): the engine is deterministic, every op is
  numpy's on one process, so the switches are recorded and answered, and nothing changes;
- `set_float32_matmul_precision("high")` (nanoGPT-style scripts): numpy's float32 matmul always computes in
  full float32, which is "highest"; the setting is recorded and answered, as PyTorch allows any setting
  to compute more precisely than asked;
- `set_flush_denormal(True)` answers False, PyTorch's answer where flushing is not supported: numpy keeps
  subnormal numbers;
- `set_warn_always`: the facade's one-time notes (DataLoader's num_workers) are then given every time;
- `is_inference_mode_enabled()`: inside `torch.inference_mode()`; `is_inference(t)` is False, since the
  engine's inference mode is no_grad and its tensors are ordinary ones;
- `set_default_tensor_type`: float32 types are the default already; others are refused as
  set_default_dtype is;
- `is_autocast_enabled()`: False, always: autocast never changes a dtype here (torch.autocast is the no-op
  PyTorch makes of it without CUDA, or refused).
"""
from __future__ import annotations

from tinygrad_like import Tensor
from tinygrad_like.function import state
from tinygrad_like.torch import _tensors
from tinygrad_like.torch._refuse import REFUSED, NotInEngine

__all__ = ["set_anomaly_enabled", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
           "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode", "set_float32_matmul_precision", "get_float32_matmul_precision",
           "set_flush_denormal", "set_warn_always", "is_warn_always_enabled", "is_inference",
           "is_inference_mode_enabled", "set_default_tensor_type", "is_autocast_enabled", "is_autocast_cpu_enabled"]

SETTINGS = {"deterministic": False, "warn_only": False, "debug_mode": 0, "matmul_precision": "highest",
            "warn_always": False}


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Switch the engine's detect_anomaly mode on or off for every later backward pass."""
    if not check_nan:
        raise NotImplementedError("set_anomaly_enabled(check_nan=False): the engine's anomaly mode always checks "
                                  "each gradient for NaN and Inf; leave check_nan=True")
    state.detect_anomaly = bool(enabled)


def is_anomaly_enabled() -> bool:
    return state.detect_anomaly


def is_anomaly_check_nan_enabled() -> bool:
    """True: when anomaly detection is on, the engine always checks for NaN (PyTorch's default)."""
    return True


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Recorded: the engine's ops are deterministic already (numpy, one process, fixed summation orders)."""
    SETTINGS["deterministic"], SETTINGS["warn_only"] = bool(mode), bool(warn_only)
    SETTINGS["debug_mode"] = (1 if warn_only else 2) if mode else 0


def are_deterministic_algorithms_enabled() -> bool:
    return SETTINGS["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return SETTINGS["warn_only"]


def set_deterministic_debug_mode(debug_mode) -> None:
    """0 / "default", 1 / "warn", 2 / "error", as PyTorch's; the same as use_deterministic_algorithms."""
    modes = {"default": 0, "warn": 1, "error": 2}
    mode = modes.get(debug_mode, debug_mode)
    if mode not in (0, 1, 2):
        raise RuntimeError(f"set_deterministic_debug_mode: expected 0, 1, 2, 'default', 'warn' or 'error', "
                           f"got {debug_mode!r}")
    use_deterministic_algorithms(mode > 0, warn_only=mode == 1)


def get_deterministic_debug_mode() -> int:
    return SETTINGS["debug_mode"]


def set_float32_matmul_precision(precision: str) -> None:
    """Recorded ("highest", "high" or "medium"); numpy's float32 matmul is always full float32 precision."""
    if precision not in ("highest", "high", "medium"):
        raise ValueError(f"set_float32_matmul_precision: expected 'highest', 'high' or 'medium', got {precision!r}")
    SETTINGS["matmul_precision"] = precision


def get_float32_matmul_precision() -> str:
    return SETTINGS["matmul_precision"]


def set_flush_denormal(mode: bool) -> bool:
    """False for mode=True (numpy cannot flush subnormal numbers to zero: PyTorch's answer on a CPU that
    cannot), True for mode=False (subnormals are kept, as asked)."""
    return not mode


def set_warn_always(b: bool) -> None:
    SETTINGS["warn_always"] = bool(b)


def is_warn_always_enabled() -> bool:
    return SETTINGS["warn_always"]


def is_inference(input: Tensor) -> bool:
    """False: the engine's inference_mode is no_grad, and what it makes is an ordinary tensor."""
    if not isinstance(input, Tensor):
        raise TypeError(f"is_inference: expected a Tensor, got {type(input).__name__}")
    return False


def is_inference_mode_enabled() -> bool:
    """True inside `with torch.inference_mode():` (and not inside an inference_mode(False) within it)."""
    return _tensors.inference_mode.active


def set_default_tensor_type(t) -> None:
    """torch.FloatTensor (or its name) is the default already; any other type is refused, as
    set_default_dtype is (floats are float32 here)."""
    name = t if isinstance(t, str) else getattr(t, "__name__", str(t))
    if name.removeprefix("torch.") != "FloatTensor":
        raise NotInEngine(f"tinygrad_like.torch has no set_default_tensor_type({name}) "
                          f"({REFUSED['torch.set_default_dtype']}): the engine does not provide it. "
                          "See docs/pytorch.md.")


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """False: no autocast region ever computes in a lower precision here (torch.amp.autocast)."""
    return False


def is_autocast_cpu_enabled() -> bool:
    return False

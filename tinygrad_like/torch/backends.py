"""torch.backends: no MPS and no CUDA (is_available() and is_built() are False); cudnn's switches
(`torch.backends.cudnn.deterministic = True`, ...) can be set and change nothing."""
from types import SimpleNamespace

__all__ = ["mps", "cuda", "cudnn"]


def _false() -> bool:
    return False


mps = SimpleNamespace(is_available=_false, is_built=_false)
cuda = SimpleNamespace(is_built=_false, matmul=SimpleNamespace(allow_tf32=False))
cudnn = SimpleNamespace(is_available=_false, enabled=False, deterministic=False, benchmark=False, allow_tf32=False)

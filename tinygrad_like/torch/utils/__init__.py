"""torch.utils: only torch.utils.data."""
from tinygrad_like.torch._refuse import module_getattr
from tinygrad_like.torch.utils import data

__all__ = ["data"]
__getattr__ = module_getattr("torch.utils")

"""`import tinygrad_like.functional as F`: torch.nn.functional's names, whose code lives in the PyTorch
dialect (tinygrad_like/dialect/functional.py); this module is their public address."""
from tinygrad_like.dialect.functional import *  # noqa: F401,F403
from tinygrad_like.dialect.functional import __all__  # noqa: F401

"""tinygrad_like: a tensor autograd engine on numpy, small enough to read and complete enough to train a GPT.

Two layers: the teaching core (tensor.py, ops.py, autograd.py, ...: plain numpy), and the fast path
(tinygrad_like/fast/), which registers its fused ops and faster array functions with the core when
imported here. Nothing in the core imports the fast path. Beside both, the PyTorch dialect
(tinygrad_like/dialect/) attaches PyTorch's names to the Tensor when imported here; nothing in the
core imports it either.
"""
# importing these two is what they do: the dialect attaches PyTorch's names to the Tensor
# (dialect/__init__.py), the fast path registers its ops with the core (fast/__init__.py)
from tinygrad_like import dialect, fast
from tinygrad_like.autograd import grad
from tinygrad_like.backprop_steps import backprop_steps
from tinygrad_like.errors import DimError, ShapeError
from tinygrad_like.fast import get_num_threads, set_num_threads
from tinygrad_like.function import composed, detect_anomaly, enable_grad, no_grad, scope
from tinygrad_like.gradcheck import GradcheckError, gradcheck, gradgradcheck
from tinygrad_like.graph import draw_graph
from tinygrad_like.tensor import Tensor

__all__ = ["Tensor", "no_grad", "enable_grad", "grad", "gradcheck", "gradgradcheck", "GradcheckError",
           "draw_graph", "backprop_steps", "scope", "detect_anomaly", "composed", "set_num_threads",
           "get_num_threads", "fast", "dialect", "DimError", "ShapeError"]

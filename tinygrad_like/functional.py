"""`import tinygrad_like.functional as F`: torch.nn.functional's names, whose code lives in the PyTorch
dialect (tinygrad_like/dialect/: functional.py, activations.py, losses.py, margin_losses.py, distances.py, norms.py,
layers.py, ctc.py, multi_head_attention.py, rearrange.py);
this module is their public address."""
from tinygrad_like.dialect import activations as _activations
from tinygrad_like.dialect import ctc as _ctc
from tinygrad_like.dialect import distances as _distances
from tinygrad_like.dialect import functional as _functional
from tinygrad_like.dialect import layers as _layers
from tinygrad_like.dialect import losses as _losses
from tinygrad_like.dialect import margin_losses as _margin_losses
from tinygrad_like.dialect import multi_head_attention as _mha
from tinygrad_like.dialect import norms as _norms
from tinygrad_like.dialect import rearrange as _rearrange
from tinygrad_like.dialect.activations import *  # noqa: F401,F403
from tinygrad_like.dialect.ctc import *  # noqa: F401,F403
from tinygrad_like.dialect.distances import *  # noqa: F401,F403
from tinygrad_like.dialect.functional import *  # noqa: F401,F403
from tinygrad_like.dialect.layers import *  # noqa: F401,F403
from tinygrad_like.dialect.losses import *  # noqa: F401,F403
from tinygrad_like.dialect.margin_losses import *  # noqa: F401,F403
from tinygrad_like.dialect.multi_head_attention import *  # noqa: F401,F403
from tinygrad_like.dialect.norms import *  # noqa: F401,F403
from tinygrad_like.dialect.rearrange import *  # noqa: F401,F403

__all__ = [*_functional.__all__, *_activations.__all__, *_losses.__all__, *_margin_losses.__all__,
           *_distances.__all__, *_norms.__all__, *_layers.__all__, *_ctc.__all__, *_mha.__all__,
           *_rearrange.__all__]

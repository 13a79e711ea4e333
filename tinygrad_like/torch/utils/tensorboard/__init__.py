"""torch.utils.tensorboard: SummaryWriter, writing TensorBoard event files through the `tensorboard` package
(an optional extra: `pip install -e '.[tensorboard]'` or `pip install tensorboard`). Without the package,
importing this module fails as PyTorch's does, with the line that installs it.

Written: add_scalar, add_scalars (each tag in its own run folder beside the log folder, as PyTorch does),
add_text and add_histogram; `tensorboard --logdir runs` reads them. Anything else a SummaryWriter can do
(images, graphs, embeddings) raises NotInEngine naming it.
"""
try:
    import tensorboard  # noqa: F401 (the check PyTorch makes on import)
except ModuleNotFoundError:
    raise ModuleNotFoundError("No module named 'tensorboard': torch.utils.tensorboard writes its event files "
                              "through the tensorboard package; pip install tensorboard", name="tensorboard") from None

from tinygrad_like.torch._refuse import module_getattr
from tinygrad_like.torch.utils.tensorboard.writer import SummaryWriter

__all__ = ["SummaryWriter"]
__getattr__ = module_getattr("torch.utils.tensorboard")

"""torch.optim.lr_scheduler: nn/lr_scheduler.py's LambdaLR, StepLR, CosineAnnealingLR and OneCycleLR."""
from nn.lr_scheduler import CosineAnnealingLR, LambdaLR, LRScheduler, OneCycleLR, StepLR
from tinygrad_like.torch._refuse import module_getattr

__all__ = ["LRScheduler", "LambdaLR", "StepLR", "CosineAnnealingLR", "OneCycleLR"]
__getattr__ = module_getattr("torch.optim.lr_scheduler")

"""nn: transformer layers, optimizers and checkpoints, built only from tinygrad_like's Tensor ops."""
from nn.module import Module, ModuleDict
from nn.linear import Linear
from nn import init

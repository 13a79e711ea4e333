"""nn: transformer layers, optimizers and checkpoints, built only from tinygrad_like's Tensor ops."""
from nn import init, lr_scheduler, optim, state
from nn.activations import (
    CELU,
    ELU,
    GELU,
    GLU,
    SELU,
    Flatten,
    Identity,
    LogSigmoid,
    LogSoftmax,
    Mish,
    ReLU,
    Sigmoid,
    SiLU,
    Softmax,
    Softmax2d,
    Softmin,
    Softplus,
    Softsign,
    Tanh,
    Tanhshrink,
    Unflatten,
)
from nn.attention import Attention, KVCache
from nn.batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from nn.block import Block
from nn.containers import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from nn.distance import CosineSimilarity, PairwiseDistance
from nn.dropout import AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout
from nn.embedding import Embedding, EmbeddingBag
from nn.linear import Bilinear, Linear
from nn.losses import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    CTCLoss,
    GaussianNLLLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    NLLLoss2d,
    PoissonNLLLoss,
    SmoothL1Loss,
)
from nn.margin_losses import (
    CosineEmbeddingLoss,
    HingeEmbeddingLoss,
    MarginRankingLoss,
    MultiLabelMarginLoss,
    MultiLabelSoftMarginLoss,
    MultiMarginLoss,
    SoftMarginLoss,
    TripletMarginLoss,
    TripletMarginWithDistanceLoss,
)
from nn.mlp import MLP
from nn.module import HookPoint, Module
from nn.moe import MoE
from nn.norm import (
    CrossMapLRN2d,
    GroupNorm,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    LayerNorm,
    LocalResponseNorm,
    RMSNorm,
)
from nn.padding import (
    CircularPad1d,
    CircularPad2d,
    CircularPad3d,
    ConstantPad1d,
    ConstantPad2d,
    ConstantPad3d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReflectionPad3d,
    ReplicationPad1d,
    ReplicationPad2d,
    ReplicationPad3d,
    ZeroPad1d,
    ZeroPad2d,
    ZeroPad3d,
)
from nn.piecewise import Hardshrink, Hardsigmoid, Hardswish, Hardtanh, PReLU, ReLU6, RReLU, Softshrink, Threshold
from nn.rearrange import ChannelShuffle, PixelShuffle, PixelUnshuffle
from nn.recurrent import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from nn.rope import RoPE, apply_rope

"""torch.utils.data: datasets (dataset.py), the orders to read them in (sampler.py) and the DataLoader
(dataloader.py), as submodules of the same names as PyTorch's, so `from torch.utils.data.dataloader import
DataLoader` works as `from torch.utils.data import DataLoader` does."""
from tinygrad_like.torch._refuse import module_getattr
from tinygrad_like.torch.utils.data import dataloader, dataset, sampler
from tinygrad_like.torch.utils.data.dataloader import DataLoader, default_collate, default_convert, get_worker_info
from tinygrad_like.torch.utils.data.dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from tinygrad_like.torch.utils.data.sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "Subset", "ConcatDataset", "ChainDataset",
           "StackDataset", "random_split", "DataLoader", "default_collate", "default_convert", "get_worker_info",
           "Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler",
           "BatchSampler"]
__getattr__ = module_getattr("torch.utils.data")

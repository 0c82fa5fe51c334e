"""The bridge to PyTorch: a tokkit dataset as a `torch.utils.data.IterableDataset`.

Only `as_torch_dataset()` imports this module, so `import tokkit.pretraining` never imports torch.

>>> loader = DataLoader(dataset.as_torch_dataset(), batch_size=32, num_workers=2,  # doctest: +SKIP
...                     collate_fn=MaskingCollator(tok, return_tensors="pt"))
"""
import torch


class TorchIterable(torch.utils.data.IterableDataset):
    """Delegates to a tokkit dataset, which finds its DataLoader worker through torch itself."""

    def __init__(self, dataset):
        super().__init__()
        self.dataset = dataset

    def __iter__(self):
        return iter(self.dataset)

"""graphferry as PyG's ``PrefetchLoader``: the batches of a graphferry loader
copied to a GPU while the batch before them trains."""

from __future__ import annotations

from typing import Any

import torch
from torch_geometric.loader import PrefetchLoader as _PyGPrefetchLoader

from .._loader import EngineLoader
from .._transfer import prefetch_transfer

__all__ = ["PrefetchLoader"]


class PrefetchLoader:
    r"""``torch_geometric.loader.PrefetchLoader`` for graphferry's PyG
    loaders (:class:`NeighborLoader`, :class:`LinkNeighborLoader`): yields
    their batches on ``device``.

    The GPU data path: the engine samples and gathers each batch on the CPU
    straight into its page-locked pool (whatever the loader's
    ``pin_memory``); when a batch is handed over, the next one is converted
    into its ``Data`` batch and its copies to the device are issued on a
    side stream, to run while the training loop runs on the batch before
    it; the training stream waits for the copies on an event (never the
    host), and the batch's device memory is recorded on it so that PyTorch
    does not reuse it early. It needs no CUDA build of graphferry.

    Any other loader is handed to PyG's ``PrefetchLoader``.

    Args:
        loader: the loader.
        device (torch.device, optional): the device; a CPU device yields the
            loader's batches as they are. (default: :obj:`None`: CUDA when
            available, as in PyG; an unavailable CUDA device falls back to
            the CPU with PyG's warning)
    """

    def __init__(self, loader: Any, device: torch.device | str | None = None):
        self.loader = loader
        if isinstance(loader, EngineLoader):
            self.transfer = prefetch_transfer(device)
            self.device = self.transfer.device if self.transfer is not None else torch.device("cpu")
        else:
            self.transfer = None
            self._pyg = _PyGPrefetchLoader(loader, device)
            self.device = self._pyg.device_helper.device

    def __iter__(self) -> Any:
        if not isinstance(self.loader, EngineLoader):
            return iter(self._pyg)
        if self.transfer is None:
            return iter(self.loader)
        return self.loader._iterate(self.transfer)

    def __len__(self) -> int:
        return len(self.loader)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.loader})"

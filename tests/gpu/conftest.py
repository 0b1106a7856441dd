"""Fixtures shared by the GPU tests (tests/gpu/run.sh runs them on a GPU)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def torch():
    """torch, with PyTorch's primary context made first, as in training."""
    import torch

    torch.zeros(1, device="cuda")
    return torch

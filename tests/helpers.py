"""Test helpers shared across the suite: random non-trivial weights, and padded batches with garbage in the padding."""
import torch


def randomize(module: torch.nn.Module, seed: int = 0, scale: float = 0.5) -> torch.nn.Module:
    """Non-trivial gates and biases: every parameter drawn from N(0, scale²)."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for parameter in module.parameters():
            parameter.copy_(torch.randn(parameter.shape, generator=generator, dtype=parameter.dtype) * scale)
    return module


def padded(lengths, size: int, seed: int, dtype=torch.float32, garbage: float = 37.0, requires_grad: bool = False,
           device: str = "cpu"):
    """A right-padded batch `(B, max(lengths), size)` with garbage in the padding (which must not leak), and its mask."""
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(len(lengths), max(lengths), size, generator=generator, dtype=dtype)
    mask = torch.arange(max(lengths))[None, :] < torch.tensor(lengths)[:, None]
    x[~mask] = garbage
    return x.to(device).requires_grad_(requires_grad), mask.to(device)

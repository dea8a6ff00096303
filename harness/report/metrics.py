"""How close a request's output is to its cache-free reference."""

from __future__ import annotations

import numpy as np
import torch
from skimage.metrics import peak_signal_noise_ratio, structural_similarity


def frame_ssim(reference: np.ndarray, frames: np.ndarray) -> list[float]:
    """SSIM per frame of two (T, H, W, 3) uint8 clips (skimage, data_range=255)."""
    return [float(structural_similarity(r, f, channel_axis=-1, data_range=255))
            for r, f in zip(reference, frames)]


def psnr(reference: np.ndarray, frames: np.ndarray) -> float | None:
    """PSNR in dB over the whole clip; None when the clips are identical (infinite)."""
    if np.array_equal(reference, frames):
        return None
    return float(peak_signal_noise_ratio(reference, frames, data_range=255))


def compare_outputs(ref_latents: torch.Tensor, ref_frames: torch.Tensor,
                    latents: torch.Tensor, frames: torch.Tensor) -> dict:
    ssim = frame_ssim(ref_frames.numpy(), frames.numpy())
    return {
        "latents_equal": bool(torch.equal(ref_latents, latents)),
        "max_abs_err": float((ref_latents.float() - latents.float()).abs().max()),
        "ssim_per_frame": [round(s, 6) for s in ssim],
        "ssim_mean": round(float(np.mean(ssim)), 6),
        "ssim_min": round(float(np.min(ssim)), 6),
        "psnr": psnr(ref_frames.numpy(), frames.numpy()),
    }

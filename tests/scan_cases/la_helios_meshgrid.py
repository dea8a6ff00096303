# expect: none
# An older Helios rotary embedding cached its meshgrid by height, width and device string.
import functools

import torch


class RotaryEmbed:
    @functools.lru_cache(maxsize=32)
    def _get_spatial_meshgrid(self, height, width, device_str):
        device = torch.device(device_str)
        ys = torch.arange(height, device=device, dtype=torch.float32)
        xs = torch.arange(width, device=device, dtype=torch.float32)
        return torch.meshgrid(ys, xs, indexing="ij")

    def forward(self, frame_indices, height, width, device):
        grid_y, grid_x = self._get_spatial_meshgrid(height, width, str(device))
        return frame_indices, grid_y, grid_x

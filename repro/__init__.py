"""Reproduction: allocator-reuse strategies, the scenario catalogue, the toy pipeline."""

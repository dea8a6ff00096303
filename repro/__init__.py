"""Reproduction: video models behind one interface (the toy and real diffusers
architectures), allocator-reuse strategies, the scenario catalogue, back-to-back serving."""

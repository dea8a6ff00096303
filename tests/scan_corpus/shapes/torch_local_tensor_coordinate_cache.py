import threading


class LocalMode:
    def __init__(self):
        self._coordinate_cache = {}
        self._coordinate_cache_lock = threading.Lock()


class Mesh:
    def coordinates(self, lm, compute):
        mesh_id = id(self)
        if mesh_id in lm._coordinate_cache:  # corpus: sink
            return lm._coordinate_cache[mesh_id]
        with lm._coordinate_cache_lock:
            coords = compute(self)
            lm._coordinate_cache[mesh_id] = coords
        return coords

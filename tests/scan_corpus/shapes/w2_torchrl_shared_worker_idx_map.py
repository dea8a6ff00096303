class SharedMemTransport:
    def __init__(self):
        self._params_map = None  # a dict[worker_idx, TensorDictBase] map
        self._unique_weights = None

    def register_weights(self, params_map, init_queues, per_worker=False):
        from torchrl.collectors.utils import _cast

        self._params_map = params_map
        self._per_worker = per_worker
        if per_worker:
            # Per-worker mode: each worker gets its own independent weight copy
            self._unique_weights = []
            self._worker_to_weights_idx = {}  # Maps worker_idx to index in _unique_weights
            for worker_idx, weights in params_map.items():
                weights = weights.data.apply(_cast, weights)
                self._worker_to_weights_idx[worker_idx] = len(self._unique_weights)  # corpus: sink
                self._unique_weights.append(weights)

    def _update_single_worker(self, worker_idx, weights):
        weights_idx = self._worker_to_weights_idx[worker_idx]
        buffer = self._unique_weights[weights_idx]
        buffer.update_(weights.detach(), non_blocking=True)

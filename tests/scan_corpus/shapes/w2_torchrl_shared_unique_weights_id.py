class SharedMemTransport:
    def __init__(self):
        self._params_map = None  # a dict[worker_idx, TensorDictBase] map
        self._weight_queues = None
        self._unique_weights = None

    def register_weights(self, params_map, init_queues, per_worker=False):
        from torchrl.collectors.utils import _cast

        self._weight_queues = init_queues
        self._params_map = params_map
        self._per_worker = per_worker
        if per_worker:
            self._unique_weights = []
            self._worker_to_weights_idx = {}
            for worker_idx, weights in params_map.items():
                weights = weights.data.apply(_cast, weights)
                self._worker_to_weights_idx[worker_idx] = len(self._unique_weights)
                self._unique_weights.append(weights)
        else:
            # Workers on the same device share the same weight buffer
            self._unique_weights = []
            for weights in params_map.values():
                if id(weights) in [id(w) for w in self._unique_weights]:  # corpus: sink
                    continue
                weights = weights.data.apply(_cast, weights)
                self._unique_weights.append(weights)

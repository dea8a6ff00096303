# joblib/_dask.py: DaskDistributedBackend.data_futures, futures keyed by id of user-scattered arguments
class DaskDistributedBackend:
    def __init__(self, client, scatter=None):
        self.client = client
        if scatter is not None and len(scatter) > 0:
            # Keep a reference to the scattered data to keep the ids the same
            self._scatter = list(scatter)
            scattered = self.client.scatter(scatter, broadcast=True)
            self.data_futures = {id(x): f for x, f in zip(scatter, scattered)}  # corpus: sink
        else:
            self._scatter = []
            self.data_futures = {}

    def _to_func_args(self, func):
        itemgetters = dict()
        collected_futures = []

        def maybe_to_futures(args):
            for arg in args:
                arg_id = id(arg)
                if arg_id in itemgetters:
                    yield itemgetters[arg_id]
                    continue
                f = self.data_futures.get(arg_id, None)  # corpus: sink
                if f is not None:
                    getter = len(collected_futures)
                    collected_futures.append(f)
                    itemgetters[arg_id] = getter
                    arg = getter
                yield arg

        return [list(maybe_to_futures(args)) for _, args, _ in func.items]

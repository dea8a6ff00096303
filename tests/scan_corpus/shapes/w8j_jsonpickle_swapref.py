class _Proxy(object):
    def __init__(self):
        self.instance = None


class Unpickler(object):
    def __init__(self):
        self.reset()

    def reset(self):
        # Map of objects to their index in the _objs list
        self._obj_to_idx = {}
        self._objs = []

    def _mkref(self, obj):
        obj_id = id(obj)
        try:
            self._obj_to_idx[obj_id]
        except KeyError:
            self._obj_to_idx[obj_id] = len(self._objs)
            self._objs.append(obj)
        return obj

    def _swapref(self, proxy, instance):
        proxy_id = id(proxy)
        instance_id = id(instance)

        instance_index = self._obj_to_idx[proxy_id]
        self._obj_to_idx[instance_id] = instance_index  # corpus: sink
        del self._obj_to_idx[proxy_id]

        self._objs[instance_index] = instance

    def _restore_reduce(self, obj):
        proxy = _Proxy()
        self._mkref(proxy)
        stage1 = object()
        self._swapref(proxy, stage1)
        return stage1

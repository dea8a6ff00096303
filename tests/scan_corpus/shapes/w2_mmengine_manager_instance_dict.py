import threading
from collections import OrderedDict

_lock = threading.RLock()


class ManagerMeta(type):
    def __init__(cls, *args):
        cls._instance_dict = OrderedDict()
        super().__init__(*args)


class ManagerMixin(metaclass=ManagerMeta):
    def __init__(self, name='', **kwargs):
        self._instance_name = name

    @classmethod
    def get_instance(cls, name, **kwargs):
        _lock.acquire()
        instance_dict = cls._instance_dict
        if name not in instance_dict:
            instance = cls(name=name, **kwargs)
            instance_dict[name] = instance  # corpus: sink
        _lock.release()
        return instance_dict[name]

    @classmethod
    def get_current_instance(cls):
        _lock.acquire()
        name = next(iter(reversed(cls._instance_dict)))
        _lock.release()
        return cls._instance_dict[name]

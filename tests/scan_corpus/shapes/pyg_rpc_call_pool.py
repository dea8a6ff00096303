import threading
from abc import ABC, abstractmethod
from typing import Dict


class RPCCallBase(ABC):
    @abstractmethod
    def rpc_sync(self, *args, **kwargs):
        pass


_rpc_call_lock = threading.RLock()
_rpc_call_id: int = 0
_rpc_call_pool: Dict[int, RPCCallBase] = {}


def rpc_register(call: RPCCallBase) -> int:
    global _rpc_call_id, _rpc_call_pool

    with _rpc_call_lock:
        call_id = _rpc_call_id
        _rpc_call_id += 1
        if call_id in _rpc_call_pool:
            raise RuntimeError("Registered function twice in 'rpc_register'")
        _rpc_call_pool[call_id] = call  # corpus: sink

    return call_id


def _rpc_sync_call(call_id: int, *args, **kwargs):
    return _rpc_call_pool.get(call_id).rpc_sync(*args, **kwargs)

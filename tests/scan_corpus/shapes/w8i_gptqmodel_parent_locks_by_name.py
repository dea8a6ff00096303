# gptqmodel/utils/module_locks.py: module-global lock registry keyed by the parent module's
# dotted NAME (a string), not by id(module).
from threading import Lock, RLock
from typing import Dict, Optional

ROOT_PARENT_KEY = "<root>"

_PARENT_LOCKS: Dict[str, RLock] = {}
_PARENT_LOCKS_GUARD = Lock()


def parent_lock_key(module_name: Optional[str]) -> str:
    if not module_name:
        return ROOT_PARENT_KEY
    parts = module_name.split(".")
    if len(parts) <= 1:
        return parts[0]
    return ".".join(parts[:-1])


def get_parent_lock(module_name: Optional[str]) -> RLock:
    key = parent_lock_key(module_name)
    with _PARENT_LOCKS_GUARD:
        lock = _PARENT_LOCKS.get(key)
        if lock is None:
            lock = RLock()
            _PARENT_LOCKS[key] = lock  # corpus: sink
    return lock

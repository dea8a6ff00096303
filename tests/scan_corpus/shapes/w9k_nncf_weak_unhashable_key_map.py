import weakref
from typing import Any, Dict, Optional, Tuple


class WeakUnhashableKeyMap:
    def __init__(self) -> None:
        self._data: Dict[int, Tuple[weakref.ReferenceType, Any]] = {}

    def __getitem__(self, obj: Any) -> Any:
        ref_obj, val = self._data[id(obj)]
        if ref_obj() is not obj:
            raise KeyError(obj)
        return val

    def __setitem__(self, obj: Any, value: Any) -> None:
        key = id(obj)
        ref_obj, _ = self._data.get(key, (None, None))

        if ref_obj is not None and ref_obj() is obj:
            self._data[key] = ref_obj, value
        else:

            def on_destroy(_: Any) -> None:
                del self._data[key]

            self._data[key] = weakref.ref(obj, on_destroy), value  # corpus: sink

    def get(self, obj: Any, default: Optional[Any] = None) -> Optional[Any]:
        key = id(obj)
        try:
            _, val = self._data[key]
            return val
        except KeyError:
            return default

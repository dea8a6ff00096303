import functools
import weakref
from collections import defaultdict


class Engine:
    def __init__(self):
        self._event_handlers = defaultdict(list)

    def _handler_wrapper(self, handler, event_name, event_filter):
        @functools.wraps(handler)
        def wrapper(*args, **kwargs):
            event = self.state.get_event_attrib_value(event_name)
            if event_filter(self, event):
                return handler(*args, **kwargs)

        # setup input handler as parent to make has_event_handler work
        setattr(wrapper, "_parent", weakref.ref(handler))  # corpus: sink
        return wrapper

    def add_event_handler(self, event_name, handler, *args, **kwargs):
        if getattr(event_name, "filter", None) is not None:
            handler = self._handler_wrapper(handler, event_name, event_name.filter)
        self._event_handlers[event_name].append((handler, (weakref.ref(self),) + args, kwargs))

    def has_event_handler(self, handler, event_name):
        for h, _, _ in self._event_handlers[event_name]:
            if self._compare_handlers(handler, h):
                return True
        return False

    @staticmethod
    def _compare_handlers(user_handler, registered_handler):
        if hasattr(registered_handler, "_parent"):
            registered_handler = registered_handler._parent()
        return registered_handler == user_handler

from _thread import get_ident


def recursive_repr(fillvalue='...'):
    'Decorator to make a repr function return fillvalue for a recursive call'

    def decorating_function(user_function):
        repr_running = set()

        def wrapper(self):
            key = id(self), get_ident()
            if key in repr_running:
                return fillvalue
            repr_running.add(key)  # corpus: sink
            try:
                result = user_function(self)
            finally:
                repr_running.discard(key)
            return result

        wrapper.__name__ = getattr(user_function, '__name__')
        return wrapper

    return decorating_function

def compiled_objects_cache(attribute_name):
    def decorator(func):
        """
        This decorator caches just the ids, oopposed to caching the object itself.
        """
        def wrapper(evaluator, obj, parent_context=None):
            cache = getattr(evaluator, attribute_name)
            # Do a very cheap form of caching here.
            key = id(obj)
            try:
                cache[key]
                return cache[key][0]
            except KeyError:
                if attribute_name == 'mixed_cache':
                    result = func(evaluator, obj, parent_context)
                else:
                    result = func(evaluator, obj)
                # Need to cache all of them, otherwise the id could be overwritten.
                cache[key] = result, obj, parent_context  # corpus: sink
                return result
        return wrapper

    return decorator


class Evaluator(object):
    def __init__(self):
        self.compiled_cache = {}
        self.mixed_cache = {}


@compiled_objects_cache('compiled_cache')
def create(evaluator, obj):
    return (evaluator, obj)

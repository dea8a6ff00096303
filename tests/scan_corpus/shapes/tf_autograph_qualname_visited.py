# tensorflow/python/autograph/pyct/inspect_utils.py (stored version)
import inspect


def getqualifiedname(namespace, object_, max_depth=7, visited=None):
  if visited is None:
    visited = set()

  for name in namespace:
    if object_ is namespace[name]:
      return name

  if max_depth:
    for name in tuple(namespace.keys()):
      value = namespace[name]
      if inspect.ismodule(value) and id(value) not in visited:  # corpus: sink
        visited.add(id(value))
        name_in_module = getqualifiedname(value.__dict__, object_,
                                          max_depth - 1, visited)
        if name_in_module is not None:
          return '{}.{}'.format(name, name_in_module)
  return None

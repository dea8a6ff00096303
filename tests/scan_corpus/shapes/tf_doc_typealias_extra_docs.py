# tensorflow/python/types/doc_typealias.py
from typing import Dict

# Not useful for builtin `help()`. But these get passed to the
# doc generator so that the description is still displayed on the site.
_EXTRA_DOCS: Dict[int, str] = {}


def document(obj, doc):
  """Adds a docstring to typealias by overriding the `__doc__` attribute."""
  try:
    obj.__doc__ = doc
  except AttributeError:
    _EXTRA_DOCS[id(obj)] = doc  # corpus: sink

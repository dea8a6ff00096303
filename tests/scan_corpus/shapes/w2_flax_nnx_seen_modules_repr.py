import dataclasses
import threading


@dataclasses.dataclass
class GraphUtilsContext(threading.local):
  seen_modules_repr: set[int] | None = None


CONTEXT = GraphUtilsContext()


class Object:
  def __nnx_repr__(self):
    if CONTEXT.seen_modules_repr is None:
      CONTEXT.seen_modules_repr = set()
      clear_seen = True
    else:
      clear_seen = False

    if id(self) in CONTEXT.seen_modules_repr:
      yield ('Object', type(self), '...')
      return

    yield ('Object', type(self))
    CONTEXT.seen_modules_repr.add(id(self))  # corpus: sink

    try:
      for name, value in vars(self).items():
        if name.startswith('_'):
          continue
        yield ('Attr', name, repr(value))
    finally:
      if clear_seen:
        CONTEXT.seen_modules_repr = None

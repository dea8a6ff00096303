"""A user's script over a library's per-object settings, kept as some optimizers keep them: a
process-wide dict keyed by the id() of the object they were given for, never cleared. Two jobs,
one after the other, each builds its own objects; the first sets one of them apart.

``python per_object_settings.py``: the library as shipped; ``... forget``: the library drops an
object's settings when the object dies (weakref.finalize), which is the fix."""

import sys
import weakref

_settings = {}  # id(obj) -> settings
FORGET_DEAD = False


def override(obj, **settings):
    key = id(obj)
    if FORGET_DEAD and key not in _settings:
        weakref.finalize(obj, _settings.pop, key, None)
    _settings.setdefault(key, {}).update(settings)


def settings_for(obj, defaults):
    merged = dict(defaults)
    merged.update(_settings.get(id(obj), {}))
    return merged


class Param:
    def __init__(self, name):
        self.name = name


def job(name, freeze_first):
    params = [Param(f"{name}.{i}") for i in range(3)]
    if freeze_first:
        override(params[0], lr=0.0)
    return [settings_for(p, {"lr": 0.1})["lr"] for p in params]


if __name__ == "__main__":
    FORGET_DEAD = sys.argv[1:] == ["forget"]
    print(job("a", freeze_first=True))
    others = [Param("other") for _ in range(7)]  # made between the jobs: CPython puts the next ones elsewhere
    print(job("b", freeze_first=False))

# trio/_core/_ki.py: id(obj) only compared with an attribute stored on obj itself; nothing is keyed
import types


def legacy_isasyncgenfunction(obj: object) -> bool:
    return getattr(obj, "_async_gen_function", None) == id(obj)  # corpus: sink


def enable_ki_protection(f):
    orig = f
    if legacy_isasyncgenfunction(f):
        f = f.__wrapped__
    code = f.__code__.replace()
    f.__code__ = code
    return orig

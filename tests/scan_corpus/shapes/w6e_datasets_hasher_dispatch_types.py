from typing import Any, Dict


def hashregister(*types):
    def proxy(func):
        for t in types:
            Hasher.dispatch[t] = func
        return func

    return proxy


class Hasher:
    dispatch: Dict = {}

    @classmethod
    def hash_default(cls, value: Any) -> str:
        return repr(value)

    @classmethod
    def hash(cls, value: Any) -> str:
        if type(value) in cls.dispatch:
            return cls.dispatch[type(value)](cls, value)  # corpus: sink
        else:
            return cls.hash_default(value)


class Table:
    pass


@hashregister(Table)
def _hash_pa_table(hasher, value):
    return "table"

from typing import Dict


def _parse_symbols(symbols):
    return symbols


_free_group_cache = {}  # type: Dict[int, FreeGroup]


class FreeGroup:
    def __new__(cls, symbols):
        symbols = tuple(_parse_symbols(symbols))
        rank = len(symbols)
        _hash = hash((cls.__name__, symbols, rank))
        obj = _free_group_cache.get(_hash)

        if obj is None:
            obj = object.__new__(cls)
            obj._hash = _hash
            obj._rank = rank
            obj.symbols = symbols

            _free_group_cache[_hash] = obj  # corpus: sink

        return obj

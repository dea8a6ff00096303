class Masked:
    def __array_finalize__(self, obj):
        mask = getattr(obj, "_mask", None)
        if (mask is not None
                and obj.__array_interface__["data"][0] != self.__array_interface__["data"][0]):  # corpus: sink
            self._mask = mask.copy()
        else:
            self._mask = mask

class Storage:
    def __deepcopy__(self, memo):
        memo = memo.setdefault("torch", {})
        if self._cdata in memo:
            return memo[self._cdata]
        new = self.clone()
        memo[self._cdata] = new  # corpus: sink
        return new

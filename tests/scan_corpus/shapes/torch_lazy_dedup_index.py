class Dedup:
    def __init__(self, outs):
        self.index = []
        seen = {}
        for i, t in enumerate(outs):
            slot = seen.get(id(t))  # corpus: sink
            if slot is not None:
                self.index[slot].append(i)
            else:
                seen[id(t)] = len(self.index)
                self.index.append([i])

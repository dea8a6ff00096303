class Rewriter:
    def __eq__(self, other):
        return self is other

    def __hash__(self):
        return id(self)  # corpus: sink

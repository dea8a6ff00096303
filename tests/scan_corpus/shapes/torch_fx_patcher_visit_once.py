class Patcher:
    def __init__(self):
        self.patches_made = []
        self.visited = set()

    def visit_once(self, thing):
        idx = id(thing)
        if idx in self.visited:  # corpus: sink
            return False
        self.visited.add(idx)
        return True

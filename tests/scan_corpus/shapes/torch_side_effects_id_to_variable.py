class SideEffects:
    def __init__(self):
        self.id_to_variable = {}
        self.keepalive = []

    def track(self, item, variable):
        if id(item) in self.id_to_variable:
            raise AssertionError("already tracked")
        self.id_to_variable[id(item)] = variable  # corpus: sink
        self.keepalive.append(item)
        return variable

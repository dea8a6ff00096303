class SideEffects:
    def __init__(self):
        self.id_to_variable = {}
        self.keepalive = []

    def track(self, item, variable):
        self.id_to_variable[id(item)] = variable
        self.keepalive.append(item)

    def has_pending_mutation(self, variable):
        return getattr(variable, "mutated", False)

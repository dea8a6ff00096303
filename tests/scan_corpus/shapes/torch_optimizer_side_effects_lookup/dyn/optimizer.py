class OptimizerVariable:
    def __init__(self, value):
        self.value = value

    def graph_break_if_pending_mutation(self, tx):
        for g in self.value.param_groups:
            for p in g["params"]:
                side_effects = tx.output.side_effects
                variable = side_effects.id_to_variable.get(id(p), None)  # corpus: sink
                if variable and side_effects.has_pending_mutation(variable):
                    raise RuntimeError("graph break")

class PlotData:
    def __init__(self, data, variables):
        frame, names, ids = self._assign_variables(data, variables)
        self.frame = frame
        self.names = names
        self.ids = ids
        self.source_data = data
        self.source_vars = variables

    def join(self, data, variables):
        if not variables:
            variables = self.source_vars
        new = PlotData(data, variables)
        ids = {k: v for k, v in self.ids.items()}
        ids.update(new.ids)
        new.ids = ids
        new.source_data = self.source_data
        new.source_vars = self.source_vars
        return new

    def _assign_variables(self, data, variables):
        plot_data = {}
        names = {}
        ids = {}
        for key, val in variables.items():
            if val is None:
                continue
            if isinstance(val, str):
                names[key] = ids[key] = str(val)
                continue
            plot_data[key] = val
            if hasattr(val, "name"):
                names[key] = ids[key] = str(val.name)
            else:
                names[key] = None
                ids[key] = id(val)  # corpus: sink
        return plot_data, names, ids

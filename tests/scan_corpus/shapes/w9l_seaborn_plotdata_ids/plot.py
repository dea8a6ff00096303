from .data import PlotData


class Plotter:
    def _extract_data(self, p):
        common_data = p._data.join(None, p._facet_spec.get("variables"))
        layers = []
        for layer in p._layers:
            spec = layer.copy()
            spec["data"] = common_data.join(layer.get("source"), layer.get("vars"))
            layers.append(spec)
        return common_data, layers

class ParamStoreDict:
    def __init__(self):
        self._params = {}  # dictionary from param name to param
        self._param_to_name = {}  # dictionary from unconstrained param to param name
        self._constraints = {}

    def clear(self):
        self._params = {}
        self._param_to_name = {}
        self._constraints = {}

    def __delitem__(self, name):
        unconstrained_value = self._params.pop(name)
        self._param_to_name.pop(unconstrained_value)
        self._constraints.pop(name)

    def __setitem__(self, name, new_constrained_value, transform_inv=None):
        constraint = self._constraints.setdefault(name, "real")
        unconstrained_value = transform_inv(new_constrained_value).contiguous()
        unconstrained_value.requires_grad_(True)

        # store a bidirectional mapping between name and unconstrained tensor
        self._params[name] = unconstrained_value
        self._param_to_name[unconstrained_value] = name  # corpus: sink

    def param_name(self, p):
        return self._param_to_name.get(p)

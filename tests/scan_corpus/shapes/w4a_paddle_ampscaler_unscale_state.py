from collections import defaultdict
from enum import Enum


class OptimizerState(Enum):
    INIT = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_optimizer_state():
    return {"state": OptimizerState.INIT}


class AmpScaler:
    def __init__(self, enable=True):
        self._enable = enable
        if self._enable:
            self._optimizer_states = defaultdict(_refresh_optimizer_state)

    def minimize(self, optimizer, *args, **kwargs):
        optimizer_state = self._optimizer_states[id(optimizer)]
        if optimizer_state["state"] is OptimizerState.INIT:
            self._unscale(optimizer)
        optimize_ops, params_grads = optimizer.minimize(*args, **kwargs)
        self._optimizer_states = defaultdict(_refresh_optimizer_state)
        return optimize_ops, params_grads

    def _unscale(self, optimizer):
        if not self._enable:
            return

        optimizer_state = self._optimizer_states[id(optimizer)]  # corpus: sink

        if optimizer_state["state"] is OptimizerState.UNSCALED:
            raise RuntimeError(
                "unscale_() has already been called on this optimizer since the last update()."
            )
        elif optimizer_state["state"] is OptimizerState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")

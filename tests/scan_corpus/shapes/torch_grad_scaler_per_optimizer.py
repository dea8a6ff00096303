from collections import defaultdict


def _fresh_state():
    return {"stage": "ready", "found_inf_per_device": {}}


class Scaler:
    def __init__(self):
        self._per_opt = defaultdict(_fresh_state)

    def unscale_(self, optimizer):
        state = self._per_opt[id(optimizer)]  # corpus: sink
        if state["stage"] == "unscaled":
            raise RuntimeError("unscale_ called twice")
        state["stage"] = "unscaled"

    def update(self):
        self._per_opt = defaultdict(_fresh_state)

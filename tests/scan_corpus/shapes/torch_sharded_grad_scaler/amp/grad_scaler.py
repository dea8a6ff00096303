from collections import defaultdict


def _fresh():
    return {"stage": "ready"}


class GradScaler:
    def __init__(self):
        self._per_optimizer_states = defaultdict(_fresh)

from .grad_scaler import GradScaler


class ShardedGradScaler(GradScaler):
    def unscale_(self, optimizer):
        state = self._per_optimizer_states[id(optimizer)]  # corpus: sink
        state["stage"] = "unscaled"

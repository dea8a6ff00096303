from .state import StateManager


class TextKVCacheState:
    def __init__(self):
        self.key = None


class TextKVCacheBlockState:
    def __init__(self):
        self.kv_cache = {}


class TransformerHook:
    def __init__(self, state_manager: StateManager):
        self.state_manager = state_manager

    def new_forward(self, module, *args, **kwargs):
        encoder_hidden_states = kwargs.get("encoder_hidden_states")
        if encoder_hidden_states is not None:
            state = self.state_manager.get_state()
            state.key = encoder_hidden_states.data_ptr()
        return module.forward(*args, **kwargs)


class BlockHook:
    def __init__(self, state_manager: StateManager, block_state_manager: StateManager):
        self.state_manager = state_manager
        self.block_state_manager = block_state_manager

    def new_forward(self, module, encoder_hidden_states):
        cache_key = self.state_manager.get_state().key
        block_state = self.block_state_manager.get_state()
        if cache_key not in block_state.kv_cache:  # corpus: sink
            context = module.encoder_proj(encoder_hidden_states)
            block_state.kv_cache[cache_key] = (module.k(context), module.v(context))
        return block_state.kv_cache[cache_key]

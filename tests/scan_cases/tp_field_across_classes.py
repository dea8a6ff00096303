# expect: ARH001 L0
# One hook stores the prompt's address in a shared state; another reads it back as the key.
import torch


class PromptState:
    def __init__(self):
        self.key = None


class CaptureHook:
    def __init__(self, state):
        self.state = state

    def forward(self, prompt: torch.Tensor):
        state: PromptState = self.state
        state.key = prompt.data_ptr()


class ReuseHook:
    def __init__(self, state):
        self.state = state
        self.kv = {}

    def forward(self, prompt, project):
        state: PromptState = self.state
        cache_key = state.key
        if cache_key not in self.kv:
            self.kv[cache_key] = project(prompt)
        return self.kv[cache_key]

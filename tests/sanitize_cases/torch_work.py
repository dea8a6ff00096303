"""Ordinary torch work a user runs: training steps, a DataLoader, save and load, deepcopy,
autograd, AMP, torch.func and torch.compile, three rounds, each freeing what the last made. Many keys are taken
(deepcopy's memo, the optimizer's state) and ids and addresses come back; nothing is stale."""

import copy
import io

import torch
from torch.utils.data import DataLoader, TensorDataset


def _scaled_gelu(x, scale):
    return torch.nn.functional.gelu(x) * scale


def work(rounds: int = 3) -> None:
    # compiled once, called each round with new tensors: its guards check ids against pointers
    compiled = torch.compile(_scaled_gelu, backend="aot_eager")
    for _ in range(rounds):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        sched = torch.optim.lr_scheduler.StepLR(opt, 1)
        data = TensorDataset(torch.randn(64, 16), torch.randint(0, 4, (64,)))
        for x, y in DataLoader(data, batch_size=8, shuffle=True):
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
        buffer = io.BytesIO()
        torch.save({"model": model.state_dict(), "opt": opt.state_dict()}, buffer)
        buffer.seek(0)
        state = torch.load(buffer)
        clone = copy.deepcopy(model)
        clone.load_state_dict(state["model"])
        torch.optim.AdamW(clone.parameters()).load_state_dict(state["opt"])
        x = torch.randn(4, 16, requires_grad=True)
        torch.autograd.grad(clone(x).sum(), x)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            model(torch.randn(2, 16))
        torch.func.grad(lambda p: torch.func.functional_call(model, p, (x,)).sum())(dict(model.named_parameters()))
        x = torch.randn(8, 16)
        torch.testing.assert_close(compiled(x, 0.5), _scaled_gelu(x, 0.5))
        del opt, clone, state  # the next round frees them: ids and addresses come back


if __name__ == "__main__":
    work()
    print("done")

import torch


def estimate(func, args):
    inp_impls = {}

    def to_real(e):
        out = torch.ones_like(e)
        inp_impls[id(out)] = e  # corpus: sink
        return out

    real_args = [to_real(a) for a in args]
    result = func(*real_args)
    return result, [inp_impls[id(a)] for a in real_args]

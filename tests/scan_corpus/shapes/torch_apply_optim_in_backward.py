import torch

acc_grad_by_param = torch.utils.weak.WeakTensorKeyDictionary()


def hook_up(params):
    for param in params:
        if param not in acc_grad_by_param:
            acc_grad_by_param[param] = param.view_as(param).grad_fn.next_functions[0][0]  # corpus: sink

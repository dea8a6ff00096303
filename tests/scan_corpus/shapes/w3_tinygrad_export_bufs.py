# extra/export_model.py: compile_net names the JIT's raw buffers for export
from typing import Dict

from tinygrad.engine.jit import TinyJit
from tinygrad.tensor import Tensor


def compile_net(run: TinyJit, special_names: Dict[int, str]):
    functions, bufs, bufs_to_save, statements, bufnum = {}, {}, {}, [], 0
    for ji in run.jit_cache:
        fxn = ji.prg
        functions[fxn.name] = fxn.prg
        cargs = []
        for i, arg in enumerate(ji.rawbufs):
            key = id(arg)
            if key not in bufs:  # corpus: sink
                if key in special_names:  # corpus: sink
                    bufs[key] = (special_names[key], arg.size * arg.dtype.itemsize, arg.dtype, key)  # corpus: sink
                else:
                    bufs[key] = (f"buf_{bufnum}", arg.size * arg.dtype.itemsize, arg.dtype, key)  # corpus: sink
                    bufnum += 1
                    if i > 0:
                        bufs_to_save[bufs[key][0]] = arg  # corpus: sink
            cargs.append(bufs[key][0])  # corpus: sink
        statements.append((fxn.name, cargs, fxn.global_size, fxn.local_size))

    return functions, statements, {name: (size, dtype, key) for (name, size, dtype, key) in bufs.values()}, bufs_to_save


def jit_model(model, *args):
    @TinyJit
    def run(*x):
        out = model.forward(*x) if hasattr(model, "forward") else model(*x)
        out = [out] if isinstance(out, Tensor) else out
        return [o.realize() for o in out]

    for _ in range(2):
        the_output = run(*args)
    special_names = {}

    for (j, i), idx in run.input_replace.items():
        realized_input = args[idx].lazydata.base.realized
        run.jit_cache[j].rawbufs[i] = realized_input
        special_names[id(realized_input)] = f'input{idx}'  # corpus: sink

    for i, output in enumerate(the_output):
        special_names[id(output.lazydata.base.realized)] = f'output{i}'  # corpus: sink
    return run, special_names

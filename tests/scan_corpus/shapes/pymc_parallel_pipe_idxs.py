import multiprocessing.connection


def recv_draw(processes):
    pipes = [proc.pipe for proc in processes]
    ready = multiprocessing.connection.wait(pipes)
    idxs = {id(proc.pipe): proc for proc in processes}
    proc = idxs[id(ready[0])]  # corpus: sink
    return proc, ready[0].recv()

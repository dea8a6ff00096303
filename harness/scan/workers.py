"""Worker processes for the scan that keep what they parsed between passes.

A file read again in a later pass goes back to the worker that read it first, which still holds
its tree: on torch, parsing again was half the time of the later passes. Jobs without an owner go
to whichever worker is free, so the first pass balances itself as a process pool would.
"""

from __future__ import annotations

import gc
import multiprocessing
import signal
from collections import deque
from multiprocessing.connection import wait

IN_FLIGHT = 2  # jobs handed to a worker at once: it starts the next while the answer travels


class WorkerDied(RuntimeError):
    """A worker ended without answering (killed, out of memory)."""


def _serve(connection) -> None:
    # Ctrl-C reaches the whole process group; the parent answers it and ends the workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        message = connection.recv()
        if message is None:
            return
        index, function, job = message
        try:
            answer = (index, True, function(job))
        except Exception as exc:  # a bug in the scan: raised again in the parent, with its type
            answer = (index, False, exc)
        connection.send(answer)
        # What a job leaves behind (the trees kept for the next pass) stays to the end: frozen, the
        # collector stops walking it again during every later job (a third of the scan's time).
        gc.collect()
        gc.freeze()


class Workers:
    """``count`` processes; ``map`` returns what ``function`` gives for each job, in order, and
    remembers which worker ran which job (by the key the caller gives it)."""

    def __init__(self, count: int):
        # Forked workers inherit this process's objects (all of torch, where the caller imported
        # it); frozen, the garbage collector in each worker does not walk them again and again
        # while the parser makes its trees (that was a third of the scan's time).
        gc.freeze()
        self.connections, self.processes = [], []
        try:
            for _ in range(count):
                ours, theirs = multiprocessing.Pipe()
                process = multiprocessing.Process(target=_serve, args=(theirs,), daemon=True)
                process.start()
                theirs.close()
                self.connections.append(ours)
                self.processes.append(process)
        except BaseException:
            self.close(at_once=True)
            raise
        self.owner: dict = {}  # key -> the worker that ran its job last

    def map(self, function, jobs: list, keys: list) -> list:
        """Run ``function(job)`` for each job; a job whose key a worker has run before goes to that
        worker, the others to the first free one."""
        results: list = [None] * len(jobs)
        own: list[deque] = [deque() for _ in self.connections]
        anyone: deque = deque()
        for index, key in enumerate(keys):
            (own[self.owner[key]] if key in self.owner else anyone).append(index)
        busy = [0] * len(self.connections)
        left = len(jobs)
        while left:
            for worker, connection in enumerate(self.connections):
                while busy[worker] < IN_FLIGHT and (own[worker] or anyone):
                    index = (own[worker] or anyone).popleft()
                    self.owner[keys[index]] = worker
                    try:
                        connection.send((index, function, jobs[index]))
                    except OSError:
                        raise self._died(worker) from None
                    busy[worker] += 1
            for connection in wait([c for c, n in zip(self.connections, busy) if n]):
                worker = self.connections.index(connection)
                try:
                    index, ok, answer = connection.recv()
                except (EOFError, OSError):
                    raise self._died(worker) from None
                if not ok:
                    raise answer
                results[index] = answer
                busy[worker] -= 1
                left -= 1
        return results

    def _died(self, worker: int) -> WorkerDied:
        self.processes[worker].join(timeout=1)
        return WorkerDied(f"a scan worker ended without answering (exit code {self.processes[worker].exitcode}); "
                          "out of memory?")

    def close(self, at_once: bool = False) -> None:
        """Let the workers finish and end; ``at_once`` (after Ctrl-C or an error): end them now."""
        for connection in self.connections if not at_once else ():
            try:
                connection.send(None)
            except OSError:  # already gone
                pass
        for process in self.processes:
            if at_once:
                process.terminate()
            process.join()
        for connection in self.connections:
            connection.close()
        gc.unfreeze()

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, kind, *exc) -> None:
        self.close(at_once=kind is not None)

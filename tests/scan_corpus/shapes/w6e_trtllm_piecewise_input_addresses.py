import dataclasses
from typing import Callable, List, Optional


@dataclasses.dataclass
class Entry:
    shape: int
    input_addresses: Optional[List[int]] = None
    cuda_graph: Optional[object] = None
    callable: Optional[Callable] = None
    output: Optional[object] = None


class PiecewiseRunner(object):

    def __init__(self, capture_num_tokens, default_callable):
        self.entries: dict[int, Entry] = {}
        for num_tokens in capture_num_tokens:
            self.entries[num_tokens] = Entry(num_tokens, callable=default_callable)

    def __call__(self, runtime_num_of_token, debug, *args):
        entry = self.entries[runtime_num_of_token]
        if entry.cuda_graph is None:
            entry.input_addresses = [
                i.data_ptr() for i in args if hasattr(i, "data_ptr")
            ]
            entry.cuda_graph = object()
            output = entry.callable(*args)
            return output
        if debug:
            runtime_input_addresses = [
                i.data_ptr() for i in args if hasattr(i, "data_ptr")
            ]
            assert (entry.input_addresses == runtime_input_addresses  # corpus: sink
                    ), f"{entry.input_addresses} vs\n {runtime_input_addresses}"
        return entry.output

from collections import defaultdict


class OutputGraph:
    def __init__(self):
        self.tracked_fakes = []
        self.tracked_fakes_id_to_source = defaultdict(list)


class Tx:
    def __init__(self):
        self.output = OutputGraph()


def wrap_to_fake(tx, e, source, make_fake):
    fake_e = make_fake(e)
    tx.output.tracked_fakes.append((fake_e, source))
    tx.output.tracked_fakes_id_to_source[id(e)].append(source)  # corpus: sink
    return fake_e

from enum import Enum


class Events(Enum):
    EPOCH_STARTED = "epoch_started"
    ITERATION_STARTED = "iteration_started"


class State:
    event_to_attr = {
        Events.ITERATION_STARTED: "iteration",
        Events.EPOCH_STARTED: "epoch",
    }

    def __init__(self, **kwargs):
        self.iteration = 0
        self.epoch = 0
        for k, v in kwargs.items():
            setattr(self, k, v)

    def get_event_attrib_value(self, event_name) -> int:
        if event_name not in State.event_to_attr:
            raise RuntimeError("Unknown event name '{}'".format(event_name))
        return getattr(self, State.event_to_attr[event_name])  # corpus: sink

class Deduper:

    def dedup(self, origlist):
        return list(origlist)


class SpecialReturnHandler:

    def __init__(self, trace_inputs, trace_outputs,
                 trace_inputs_inplace_update_bool, constant_outputs_and_indexes):
        self.trace_inputs = trace_inputs
        self.trace_outputs = trace_outputs
        self.constant_outputs_and_indexes = constant_outputs_and_indexes

        self.deduper = Deduper()
        self.deduped_trace_outputs = self.deduper.dedup(self.trace_outputs)

        # local dict, dropped at the end of __init__; inputs are held by self.trace_inputs
        trace_inputs_id2pos = {
            id(x): pos for pos, x in enumerate(self.trace_inputs)
        }
        self.trace_outputs_pos_to_inputs_pos = []
        for out_pos, out in enumerate(self.deduped_trace_outputs):
            in_pos = trace_inputs_id2pos.get(id(out), None)  # corpus: sink
            if in_pos is not None and not trace_inputs_inplace_update_bool[in_pos]:
                self.trace_outputs_pos_to_inputs_pos.append((out_pos, in_pos))

def outputs_are_inputs(outputs, inputs):
    input_ids = {id(inp) for inp in inputs}
    return any(id(out) in input_ids for out in outputs)  # corpus: sink

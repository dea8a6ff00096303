def outputs_alias_inputs(outputs, inputs):
    input_storages = {inp._typed_storage()._cdata for inp in inputs}
    return any(out._typed_storage()._cdata in input_storages for out in outputs)  # corpus: sink

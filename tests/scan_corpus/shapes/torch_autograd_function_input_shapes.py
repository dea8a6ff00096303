def make_setup_context(Generated):
    def setup_context(ctx, inputs, outputs):
        key = id(Generated)
        input_shapes = tuple(getattr(inp, "shape", None) for inp in inputs)
        if not hasattr(ctx, "_pt_input_shapes"):
            ctx._pt_input_shapes = {}
        ctx._pt_input_shapes.update({key: input_shapes})  # corpus: sink

    return setup_context

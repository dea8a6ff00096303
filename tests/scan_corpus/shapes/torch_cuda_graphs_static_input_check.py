def replay(static_inputs, inputs, graph):
    for i in range(len(inputs)):
        if static_inputs[i].data_ptr() != inputs[i].data_ptr():  # corpus: sink
            static_inputs[i].copy_(inputs[i])
    graph.replay()

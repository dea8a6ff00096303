def classify_outputs(outputs):
    first_with_storage = {}
    kinds = []
    for i, o in enumerate(outputs):
        ptr = o.untyped_storage().data_ptr()
        if ptr in first_with_storage:
            kinds.append(("aliases", first_with_storage[ptr]))
            continue
        first_with_storage[o.untyped_storage().data_ptr()] = i  # corpus: sink
        kinds.append(("new", i))
    return kinds

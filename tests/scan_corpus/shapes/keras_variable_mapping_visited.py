# keras/src/models/variable_mapping.py + caller Model._get_variable_map
def _walk_savable(savable):
    return list(vars(savable).items())


def map_savable_variables(savable, store, visited_savables):
    # If the savable has already been seen, skip it.
    if id(savable) in visited_savables:  # corpus: sink
        return

    visited_savables.add(id(savable))

    for v in getattr(savable, "_variables", []):
        store[v.path] = v

    for child_attr, child_obj in _walk_savable(savable):
        if hasattr(child_obj, "_variables"):
            map_savable_variables(
                child_obj,
                store,
                visited_savables=visited_savables,
            )


class Model:
    def _get_variable_map(self):
        store = {}
        map_savable_variables(self, store=store, visited_savables=set())
        return store

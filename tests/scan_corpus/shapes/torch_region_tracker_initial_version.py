def fake_value(node, args, tracker):
    id_to_initial_version = {id(arg): arg._version for arg in args}
    tracker.track_node_mutations(node, args, id_to_initial_version)


class RegionTracker:
    def track_node_mutations(self, node, args, id_to_initial_version):
        mutated = set()
        for i, arg in enumerate(args):
            val_id = id(arg)
            if val_id in id_to_initial_version and id_to_initial_version[val_id] != arg._version:  # corpus: sink
                mutated.add(i)
        return mutated

def allocation_context(snapshot):
    addr_to_frame = {}
    for seg in snapshot["segments"]:
        addr = seg["address"]
        for blk in seg["blocks"]:
            if blk["state"] == "active_allocated":
                addr_to_frame[addr] = blk["frames"]
            addr += blk["size"]

    def object_context(obj):
        addr = obj.untyped_storage().data_ptr()
        return addr_to_frame.get(addr)  # corpus: sink

    return object_context


def create_graph(objects, snapshot):
    context = allocation_context(snapshot)
    return [context(obj) for obj in objects]

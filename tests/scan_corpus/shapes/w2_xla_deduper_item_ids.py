def _unique_id_for_ir_and_data(t):
    return t._ir_data_id


class Tensor:
    pass


class Deduper:

    def __init__(self):
        # origlist index to dedupedlist index
        self.permute_for_orig = None

    def dedup(self, origlist):
        self.permute_for_orig = []
        deduped_ids = dict()  # local to this call; origlist keeps the items alive
        deduped_list = []
        for item in origlist:
            if isinstance(item, Tensor):
                item_id = _unique_id_for_ir_and_data(item)
            else:
                item_id = id(item)
            if item_id not in deduped_ids:
                deduped_ids[item_id] = len(deduped_ids)  # corpus: sink
                deduped_list.append(item)
            self.permute_for_orig.append(deduped_ids[item_id])

        return deduped_list

    def recover(self, deduped_list):
        return [deduped_list[i] for i in self.permute_for_orig]

class GuardBuilder:
    def __init__(self, sources, get):
        self.key_order_ids = set()
        for source in sources:
            dict_obj = get(source)
            self.key_order_ids.add(id(dict_obj))  # corpus: sink

    def guards_key_order(self, obj_id):
        return obj_id in self.key_order_ids

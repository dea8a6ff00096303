import gc


class SummaryTracker(object):
    def __init__(self, ignore_self=True):
        self.summaries = {}
        self.ignore_self = ignore_self

    def create_summary(self):
        all_of_them = []  # every single object
        ref_counter = {}  # how often it is referenced

        def store_info(o):
            all_of_them.append(o)  # pins o beside the id entry
            if id(o) in ref_counter:
                ref_counter[id(o)] += 1
            else:
                ref_counter[id(o)] = 1  # corpus: sink

        store_info(self.summaries)
        for k, v in self.summaries.items():
            store_info(k)
            store_info(v)

        res = []
        for o in all_of_them:
            if len(gc.get_referrers(o)) == (ref_counter[id(o)] + 2):
                res.append(o)
        return res

import sys


def rm_key(rm):
    func = getattr(rm, 'sortKey', None)
    if func is not None:
        return func()


class Transaction(object):
    def __init__(self):
        # List of resource managers: holds every rm strongly
        self._resources = []
        self._voted = {}  # id(Connection) -> boolean, True if voted

    def join(self, resource):
        self._resources.append(resource)

    def _commitResources(self):
        L = list(self._resources)
        L.sort(key=rm_key)
        try:
            for rm in L:
                rm.tpc_vote(self)
                self._voted[id(rm)] = True  # corpus: sink
            for rm in L:
                rm.tpc_finish(self)
        except:  # noqa: E722
            t, v, tb = sys.exc_info()
            self._cleanup(L)
            raise v

    def _cleanup(self, L):
        for rm in L:
            if id(rm) not in self._voted:
                rm.abort(self)

    def _free(self):
        del self._resources[:]
        self._voted = None

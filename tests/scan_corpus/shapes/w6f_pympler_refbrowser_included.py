import gc


class _Node(object):
    def __init__(self, o, str_func=None):
        self.o = o
        self.children = []
        self.str_func = str_func


class RefBrowser(object):
    def __init__(self, rootobject, maxdepth=3, str_func=repr, repeat=True):
        self.root = rootobject
        self.maxdepth = maxdepth
        self.str_func = str_func
        self.repeat = repeat
        self.ignore = []
        # set of object ids which are already included; never reset
        self.already_included = set()
        self.ignore.append(self.already_included)

    def get_tree(self):
        return self._get_tree(self.root, self.maxdepth)

    def _get_tree(self, root, maxdepth):
        objects = gc.get_referrers(root)
        res = _Node(root, self.str_func)
        self.already_included.add(id(root))  # corpus: sink
        if maxdepth == 0:
            return res
        for o in objects:
            _id = id(o)
            if not self.repeat and (_id in self.already_included):  # corpus: sink
                res.children.append("%s (already included, id %s)" % (self.str_func(o), _id))
                continue
            if (not isinstance(o, _Node)) and (o not in self.ignore):
                res.children.append(self._get_tree(o, maxdepth - 1))
        return res

    def print_tree(self, tree=None):
        if tree is None:
            tree = self.get_tree()
        print(tree)

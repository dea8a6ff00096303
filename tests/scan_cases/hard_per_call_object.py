# expect: none
# False alarm: the object lives for one operator call, while its tensors are alive.
class ArgumentAliases:
    def __init__(self):
        self.aliases = {}

    def add(self, t, name):
        self.aliases.setdefault(t.data_ptr(), []).append(name)


def check_call(args):
    handler = ArgumentAliases()
    for name, t in args.items():
        handler.add(t, name)
    return [names for names in handler.aliases.values() if len(names) > 1]

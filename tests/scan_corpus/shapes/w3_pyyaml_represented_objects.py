# lib/yaml/representer.py: BaseRepresenter alias table keyed by id(data)
class BaseRepresenter:
    yaml_representers = {}

    def __init__(self, default_style=None, default_flow_style=False, sort_keys=True):
        self.represented_objects = {}
        self.object_keeper = []
        self.alias_key = None

    def represent(self, data):
        node = self.represent_data(data)
        self.serialize(node)
        self.represented_objects = {}
        self.object_keeper = []
        self.alias_key = None

    def represent_data(self, data):
        if self.ignore_aliases(data):
            self.alias_key = None
        else:
            self.alias_key = id(data)  # corpus: sink
        if self.alias_key is not None:
            if self.alias_key in self.represented_objects:
                node = self.represented_objects[self.alias_key]  # corpus: sink
                return node
            self.object_keeper.append(data)
        return self.yaml_representers[type(data)](self, data)

    def represent_scalar(self, tag, value, style=None):
        node = (tag, value, style)
        if self.alias_key is not None:
            self.represented_objects[self.alias_key] = node  # corpus: sink
        return node

    def represent_mapping(self, tag, mapping, flow_style=None):
        value = []
        node = (tag, value, flow_style)
        if self.alias_key is not None:
            self.represented_objects[self.alias_key] = node  # corpus: sink
        for item_key, item_value in mapping.items():
            value.append((self.represent_data(item_key), self.represent_data(item_value)))
        return node

    def ignore_aliases(self, data):
        return False

    def serialize(self, node):
        pass

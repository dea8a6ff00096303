class PluginManager:
    def __init__(self, project_name):
        self.project_name = project_name
        self._name2plugin = {}

    def register(self, plugin, name=None):
        plugin_name = name or self.get_canonical_name(plugin)

        if plugin_name in self._name2plugin:
            if self._name2plugin.get(plugin_name, -1) is None:
                return None  # blocked plugin
            raise ValueError("Plugin name already registered")

        if plugin in self._name2plugin.values():
            raise ValueError("Plugin already registered under a different name")

        self._name2plugin[plugin_name] = plugin  # corpus: sink
        return plugin_name

    def unregister(self, plugin=None, name=None):
        if name is None:
            name = self.get_name(plugin)
        if plugin is None:
            plugin = self.get_plugin(name)
            if plugin is None:
                return None
        if self._name2plugin.get(name):
            del self._name2plugin[name]
        return plugin

    def get_canonical_name(self, plugin):
        name = getattr(plugin, "__name__", None)
        return name or str(id(plugin))

    def get_plugin(self, name):
        return self._name2plugin.get(name)

    def get_name(self, plugin):
        for name, val in self._name2plugin.items():
            if plugin == val:
                return name
        return None

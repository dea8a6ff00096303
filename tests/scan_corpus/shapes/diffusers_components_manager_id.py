import time


class ComponentsManager:
    def __init__(self):
        self.components = {}
        self.added_time = {}

    def add(self, name, component):
        component_id = f"{name}_{id(component)}"
        for comp_id, comp in self.components.items():
            if comp == component:
                component_id = comp_id
                break
        self.components[component_id] = component  # corpus: sink
        self.added_time[component_id] = time.time()
        return component_id

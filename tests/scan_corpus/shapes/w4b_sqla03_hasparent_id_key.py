class InstrumentedAttribute(object):
    """one per mapped class attribute; installed on the class as a descriptor"""

    def __init__(self, manager, key, uselist, trackparent=False):
        self.manager = manager
        self.key = key
        self.uselist = uselist
        self.trackparent = trackparent

    def hasparent(self, item, optimistic=False):
        return item._state.get(('hasparent', id(self)), optimistic)

    def sethasparent(self, item, value):
        # item._state lives as long as the mapped instance; nothing keeps self alive from it
        item._state[('hasparent', id(self))] = value  # corpus: sink

    def append_event(self, event, obj, value):
        obj._state['modified'] = True
        if self.trackparent and value is not None:
            self.sethasparent(value, True)


class AttributeManager(object):
    def noninherited_managed_attributes(self, class_):
        for key in list(class_.__dict__):
            value = getattr(class_, key, None)
            if isinstance(value, InstrumentedAttribute):
                yield value

    def reset_class_managed(self, class_):
        """removes all InstrumentedAttribute property objects from the given class."""
        for attr in self.noninherited_managed_attributes(class_):
            delattr(class_, attr.key)

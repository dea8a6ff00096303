import weakref


class CustomJS:
    def __init__(self, args, code, tags):
        self.args = args
        self.code = code
        self.tags = tags


class Link:
    registry = weakref.WeakKeyDictionary()

    def __init__(self, source, target, properties):
        self._source = weakref.ref(source)
        self._target = weakref.ref(target)
        self.properties = properties
        self.registry.setdefault(source, []).append(self)

    @property
    def source(self):
        return self._source()

    def unlink(self):
        source = self.source
        if source is None:
            return
        links = self.registry.get(source, [])
        if self in links:
            links.remove(self)


class CallbackGenerator:
    def _init_callback(self, root_model, link, source, src_spec, target, tgt_spec, code):
        references = {k: v for k, v in link.properties.items()}
        src_model = source._models.get(root_model.ref["id"], (None, None))[0]
        if src_model is None:
            return
        link_id = (id(link), src_spec, tgt_spec)
        callbacks = (
            list(src_model.js_property_callbacks.values())
            + list(src_model.js_event_callbacks.values())
        )
        # Skip registering callback if already registered
        if any(link_id in cb.tags for cbs in callbacks for cb in cbs):  # corpus: sink
            return
        references["source"] = src_model
        src_cb = CustomJS(args=references, code=code, tags=[link_id])
        src_model.js_on_change(src_spec[1], src_cb)

import collections, types, weakref

_key_to_collection = collections.defaultdict(dict)
_collection_to_key = collections.defaultdict(dict)

def _collection_gced(ref):
    # runs when the listener COLLECTION dies, not when the target dies
    if not _collection_to_key or ref not in _collection_to_key:
        return
    listener_to_key = _collection_to_key.pop(ref)
    for key in listener_to_key.values():
        if key in _key_to_collection:
            dispatch_reg = _key_to_collection[key]
            dispatch_reg.pop(ref)
            if not dispatch_reg:
                _key_to_collection.pop(key)

def _stored_in_collection(event_key, owner):
    key = event_key._key
    dispatch_reg = _key_to_collection[key]  # corpus: sink
    owner_ref = owner.ref
    listen_ref = weakref.ref(event_key._listen_fn)
    if owner_ref not in dispatch_reg:
        dispatch_reg[owner_ref] = listen_ref
    listener_to_key = _collection_to_key[owner_ref]
    listener_to_key[listen_ref] = key

class _EventKey(object):
    def __init__(self, target, identifier, fn, dispatch_target, _fn_wrap=None):
        self.target = target
        self.identifier = identifier
        self.fn = fn
        if isinstance(fn, types.MethodType):
            self.fn_key = id(fn.__func__), id(fn.__self__)
        else:
            self.fn_key = id(fn)
        self.fn_wrap = _fn_wrap
        self.dispatch_target = dispatch_target

    @property
    def _key(self):
        return (id(self.target), self.identifier, self.fn_key)

    @property
    def _listen_fn(self):
        return self.fn_wrap or self.fn

    def contains(self):
        return self._key in _key_to_collection

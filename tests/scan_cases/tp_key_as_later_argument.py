# expect: ARH001 L0
# The key is the second argument of a lookup helper of another object: cache.get(device, key).
class PerDeviceCache:
    def __init__(self):
        self._by_device = {}

    def get(self, device, key):
        return self._by_device.setdefault(device, {}).get(key)

    def put(self, device, key, value):
        self._by_device.setdefault(device, {})[key] = value


class Projector:
    def __init__(self):
        self.cache = PerDeviceCache()

    def project(self, weight, fn):
        hit = self.cache.get(weight.device, weight.data_ptr())
        if hit is None:
            hit = fn(weight)
            self.cache.put(weight.device, weight.data_ptr(), hit)
        return hit

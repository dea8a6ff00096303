# fenpei/job_sh_single.py: ShJobSingle._HASH_CACHE, class-level parameter-hash cache keyed by id(self)
from base64 import urlsafe_b64encode
from struct import pack


class ShJobSingle(object):
    def __init__(self, name, subs):
        self.substitutions = dict(subs)
        self.parameter_names = list(subs)

    def _calc_param_hash(self):
        param_data = hash(tuple(self.substitutions[nm] for nm in self.parameter_names))
        return urlsafe_b64encode(pack('!q', param_data)).rstrip(b'=')

    @property
    def param_hash(self):
        ShJobSingle._HASH_CACHE = getattr(ShJobSingle, '_HASH_CACHE', {})
        if id(self) not in ShJobSingle._HASH_CACHE:  # corpus: sink
            ShJobSingle._HASH_CACHE[id(self)] = self._calc_param_hash()  # corpus: sink
        return ShJobSingle._HASH_CACHE[id(self)]  # corpus: sink

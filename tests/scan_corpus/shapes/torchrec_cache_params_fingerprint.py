class FingerprintMemo:
    def __init__(self):
        self._fingerprints = {}

    def get(self, params):
        if params is None:
            return None
        params_id = id(params)
        cached = self._fingerprints.get(params_id)  # corpus: sink
        if cached is None:
            fingerprint = params.stable_fingerprint()
            self._fingerprints[params_id] = (params, fingerprint)
            return fingerprint
        return cached[1]

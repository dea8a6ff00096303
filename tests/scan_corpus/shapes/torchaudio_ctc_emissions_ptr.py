class Decoder:
    def __init__(self, native):
        self.decoder = native

    def decode_step(self, emissions):
        if emissions.ndim != 2:
            raise RuntimeError("emissions must be 2D")
        t, n = emissions.size()
        self.decoder.decode_step(emissions.data_ptr(), t, n)  # corpus: sink

import gc
from dataclasses import dataclass, field


@dataclass
class DecodingCGCache:
    max_batch_size: int = 0
    max_seqlen: int = 0
    device = None
    dtype = None
    callables: dict = field(default_factory=dict)
    mempool = None


def capture_graph(model, batch_size, decoding_seqlen):
    def run(*args):
        return model(*args)
    return run


def update_graph_cache(model, cache, batch_size, max_seqlen, decoding_seqlens=(1,)):
    if cache is None:
        cache = DecodingCGCache()
    if batch_size > cache.max_batch_size or max_seqlen > cache.max_seqlen:
        cache.callables = {}
        gc.collect()
        cache.max_batch_size, cache.max_seqlen = batch_size, max_seqlen
    for decoding_seqlen in decoding_seqlens:
        if (batch_size, decoding_seqlen) not in cache.callables:
            cache.callables[batch_size, decoding_seqlen] = capture_graph(  # corpus: sink
                model, batch_size, decoding_seqlen)
    return cache


def decode(model, batch_size, max_length):
    if not hasattr(model, "_decoding_cache"):
        model._decoding_cache = None
    model._decoding_cache = update_graph_cache(model, model._decoding_cache, batch_size, max_length)
    return model._decoding_cache

from functools import lru_cache


@lru_cache()
def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1))
    cs = bs[:]
    return dict(zip(bs, [chr(n) for n in cs]))


def get_pairs(word):
    pairs = set()
    prev_char = word[0]
    for char in word[1:]:
        pairs.add((prev_char, char))
        prev_char = char
    return pairs


class Encoder:
    def __init__(self, encoder, bpe_merges, errors="replace"):
        self.encoder = encoder
        self.byte_encoder = bytes_to_unicode()
        self.bpe_ranks = dict(zip(bpe_merges, range(len(bpe_merges))))
        self.cache = {}

    def bpe(self, token):
        if token in self.cache:
            return self.cache[token]
        word = tuple(token)
        pairs = get_pairs(word)
        if not pairs:
            return token
        word = " ".join(word)
        self.cache[token] = word  # corpus: sink
        return word

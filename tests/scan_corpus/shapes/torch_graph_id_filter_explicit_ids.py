def parse_filter(spec):
    explicit_ids = set()
    for part in spec.split(","):
        try:
            explicit_ids.add(int(part))  # corpus: sink
        except ValueError:
            pass
    return explicit_ids

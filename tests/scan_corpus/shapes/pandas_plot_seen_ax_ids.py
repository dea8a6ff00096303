def collect_ts_axes(pairs):
    ts_axes = []
    seen_ax_ids = set()
    for ax, is_ts in pairs:
        if is_ts and id(ax) not in seen_ax_ids:  # corpus: sink
            ts_axes.append(ax)
            seen_ax_ids.add(id(ax))
    return ts_axes

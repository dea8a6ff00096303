from itertools import groupby


class ColumnDataSource:
    def __init__(self, data):
        self.data = data


class BokehPlot:
    def traverse(self, fn, specs):
        return []

    def sync_sources(self):
        get_sources = lambda x: (id(x.current_frame.data), x)
        filter_fn = lambda x: (x.shared_datasource and x.current_frame and
                               'source' in x.handles)
        data_sources = self.traverse(get_sources, [filter_fn])
        grouped_sources = groupby(sorted(data_sources, key=lambda x: x[0]), lambda x: x[0])  # corpus: sink
        for _, group in grouped_sources:
            group = list(group)
            if len(group) > 1:
                source_data = {}
                for _, plot in group:
                    source_data.update(plot.handles['source'].data)
                new_source = ColumnDataSource(source_data)
                for _, plot in group:
                    plot.handles['source'] = new_source

# src/prompt_toolkit/styles/style.py: _MergedStyle cache keyed by invalidation hashes built from id(style list)
from prompt_toolkit.cache import SimpleCache


class Style:
    def __init__(self, style_rules):
        class_names_and_attrs = []
        for class_names, style_str in style_rules:
            class_names_and_attrs.append((frozenset(class_names.split()), style_str))
        self._style_rules = style_rules
        self.class_names_and_attrs = class_names_and_attrs

    @property
    def style_rules(self):
        return self._style_rules

    def invalidation_hash(self):
        return id(self.class_names_and_attrs)


class DynamicStyle:
    # prompt_toolkit/styles/base.py
    def __init__(self, get_style):
        self.get_style = get_style
        self._dummy = Style([])

    @property
    def style_rules(self):
        return (self.get_style() or self._dummy).style_rules

    def invalidation_hash(self):
        return (self.get_style() or self._dummy).invalidation_hash()


class _MergedStyle:
    def __init__(self, styles):
        self.styles = styles
        self._style = SimpleCache(maxsize=1)

    @property
    def _merged_style(self):
        def get():
            return Style(self.style_rules)

        return self._style.get(self.invalidation_hash(), get)  # corpus: sink

    @property
    def style_rules(self):
        style_rules = []
        for s in self.styles:
            style_rules.extend(s.style_rules)
        return style_rules

    def invalidation_hash(self):
        return tuple(s.invalidation_hash() for s in self.styles)

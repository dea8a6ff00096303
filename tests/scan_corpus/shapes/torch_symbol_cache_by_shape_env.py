from dataclasses import dataclass, field


@dataclass
class StatefulContext:
    cache_by_env: dict = field(default_factory=dict)


class ShapeEnv:
    def create_symbol(self, source_name, context):
        if isinstance(context, StatefulContext) and id(self) not in context.cache_by_env:
            context.cache_by_env[id(self)] = {}  # corpus: sink
        return context.cache_by_env[id(self)].setdefault(source_name, object())

from typing import Dict, Union


class GlobalAvailMixin:
    """Mixin class to make instances globally available."""

    _instances: Dict[str, Dict[Union[str, object], 'GlobalAvailMixin']] = {'default': {}}

    def global_available(self, key='default', group: str = 'default') -> None:
        self._save_instance(self, key, group)

    @classmethod
    def _save_instance(cls, instance, key='default', group: str = 'default') -> None:
        if group not in cls._instances:
            assert isinstance(group, str)
            cls._instances[group] = {}
        cls._instances[group][key] = instance  # corpus: sink

    @classmethod
    def find(cls, key='default', group: str = 'default'):
        return cls._instances.get(group, {}).get(key)

    @classmethod
    def find_group(cls, group: str):
        return cls._instances.get(group, {})

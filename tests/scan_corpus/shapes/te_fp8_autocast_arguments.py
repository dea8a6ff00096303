from dataclasses import dataclass, field
from typing import Any, Dict, Optional


@dataclass
class FP8GlobalState:
    global_amax_buffer: Dict[str, list] = field(default_factory=dict)
    autocast_arguments: Dict[Any, tuple] = field(default_factory=dict)


class FP8GlobalStateManager:
    quantization_state = FP8GlobalState()

    @classmethod
    def reset(cls) -> None:
        cls.quantization_state = FP8GlobalState()
    @staticmethod
    def get_unique_autocast_key(recipe=None, group: Optional[object] = None):
        recipe_config = recipe.quantizer_config() if recipe is not None else None
        group_id = id(group) if group is not None else None
        return f"recipe={recipe_config!r},group={group_id}"

    @classmethod
    def get_key_in_buffer(cls, forward: bool, fp8_recipe, fp8_group) -> str:
        autocast_key = cls.get_unique_autocast_key(fp8_recipe, fp8_group)
        return f"{'forward' if forward else 'backward'}_{autocast_key}"

    @classmethod
    def add_fp8_tensors_to_global_buffer(cls, fp8_meta: Dict[str, Any]) -> None:
        qstate = cls.quantization_state
        for forward in (True, False):
            committed_recipe = fp8_meta["recipe"]
            key = cls.get_key_in_buffer(forward, committed_recipe, fp8_meta["fp8_group"])
            autocast_key = cls.get_unique_autocast_key(committed_recipe, fp8_meta["fp8_group"])
            # the value holds the group itself: id(group) cannot be reused meanwhile
            qstate.autocast_arguments[autocast_key] = (  # corpus: sink
                committed_recipe,
                fp8_meta["fp8_group"],
            )
            if key not in qstate.global_amax_buffer:
                qstate.global_amax_buffer[key] = [fp8_meta["amax"]]
            else:
                qstate.global_amax_buffer[key].append(fp8_meta["amax"])

    @classmethod
    def reduce_and_update_fp8_tensors(cls, forward: bool = True) -> None:
        qstate = cls.quantization_state
        for buffer_key, amax_buffer in qstate.global_amax_buffer.items():
            fwd, autocast_key = buffer_key.split("_", 1)
            recipe, group = qstate.autocast_arguments[autocast_key]

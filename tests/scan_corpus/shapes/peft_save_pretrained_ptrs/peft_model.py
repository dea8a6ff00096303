# peft/peft_model.py: PeftModel.save_pretrained, local ptrs dict keyed by storage identity
import collections

from other import id_tensor_storage


class PeftModel:
    def save_pretrained(self, save_directory, safe_serialization=True, selected_adapters=None, is_main_process=True):
        for adapter_name in selected_adapters:
            output_state_dict = get_peft_model_state_dict(self, adapter_name=adapter_name)
            if is_main_process and safe_serialization:
                ptrs = collections.defaultdict(list)
                for name, tensor in output_state_dict.items():
                    if isinstance(tensor, torch.Tensor):
                        ptrs[id_tensor_storage(tensor)].append(name)  # corpus: sink
                    else:
                        ptrs[id(tensor)].append(name)  # corpus: sink
                shared_ptrs = {ptr: names for ptr, names in ptrs.items() if len(names) > 1}
                for _, names in shared_ptrs.items():
                    for shared_tensor_name in names[1:]:
                        output_state_dict[shared_tensor_name] = output_state_dict[shared_tensor_name].clone()
                safe_save_file(output_state_dict, save_directory)

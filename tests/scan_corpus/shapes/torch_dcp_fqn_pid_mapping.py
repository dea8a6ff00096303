def map_fqns(named_params, param_pid_mapping):
    fqn_pid_mapping = {}
    for fqn, param in named_params:
        if param not in param_pid_mapping:
            continue
        pid = param_pid_mapping[param]
        fqn_pid_mapping[fqn] = pid
        fqn_pid_mapping[pid] = fqn  # corpus: sink
    return fqn_pid_mapping

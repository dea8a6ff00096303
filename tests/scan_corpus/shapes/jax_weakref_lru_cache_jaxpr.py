from jax._src import util


@util.weakref_lru_cache  # corpus: sink
def jaxpr_needs_devices(jaxpr) -> bool:
    return any(eqn.primitive.name == "device_put" for eqn in jaxpr.eqns)

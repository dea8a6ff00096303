# A package whose cache keys on a helper defined in a sibling module.

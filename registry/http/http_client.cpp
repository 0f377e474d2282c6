// Filled in by the registry layer's implementation.

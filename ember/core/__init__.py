"""The tracing core: abstract values, dtypes, the jaxpr, traces and primitives."""

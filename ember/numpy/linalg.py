"""(being written) ember.numpy.linalg: norm and friends."""

__all__: list[str] = []

"""(being written) See ember/lax/__init__.py and ember/numpy/__init__.py for the layout."""

__all__: list[str] = []

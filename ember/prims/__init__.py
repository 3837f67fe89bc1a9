"""Primitives, one file per family. Importing this package registers all of them."""

"""Sphinx configuration of Ember's API reference (the pages come from tools/api_docs.py).

Input: the pages tools/api_docs.py generates into its source directory (this file is
passed to Sphinx with -c). Output: Sphinx's settings: autodoc for signatures and
docstrings, napoleon for the JAX-style "Args:"/"Returns:" sections.
Invariant: no setting hides a warning; the build runs with warnings as errors.
"""

project = "Ember"
author = "The Ember authors"
extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon"]
root_doc = "index"
exclude_patterns: list[str] = []

# Docstrings are written in Google style (JAX's): "Args:", "Returns:", "Example:".
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False

# Signatures as written (no type-hint rewriting into the description, where forward
# references to Ember's classes would be unresolvable names).
autodoc_typehints = "signature"
autodoc_member_order = "alphabetical"
autoclass_content = "class"
add_module_names = False

html_theme = "alabaster"
html_title = "Ember API reference"

"""Sphinx configuration of the treelearn documentation (`make docs`)."""
import os
import sys

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "src")))

project = "treelearn"
author = "the treelearn authors"
copyright = "the treelearn authors"
extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.doctest"]
autodoc_member_order = "bysource"
autodoc_default_options = {"members": False}
napoleon_numpy_docstring = True
napoleon_google_docstring = False
source_suffix = {".rst": "restructuredtext"}
master_doc = "index"
exclude_patterns = ["_build", "*.md"]
html_theme = "alabaster"
html_static_path = []
nitpicky = False

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

# Many docstrings are plain text with formula fragments (|x|, E f_π) and attribute names ending
# in "_" (tree_, bound_): outside `code` spans, escape the characters reStructuredText would read
# as substitutions or link targets, so the text shows as written.
import re  # noqa: E402

_CODE = re.compile(r"(``.*?``|`[^`]*`)")
_TRAILING_UNDERSCORE = re.compile(r"(?<=\w)_(?=\W|$)")


def _escape_plain_text(app, what, name, obj, options, lines):
    in_literal_block = False
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith(">>>") or stripped.startswith("..."):
            continue
        if in_literal_block and stripped and not line.startswith((" ", "\t")):
            in_literal_block = False
        if stripped.endswith("::"):
            in_literal_block = True
            continue
        if in_literal_block:
            continue
        if stripped.startswith(".. "):  # a directive (napoleon's ".. attribute:: tree_"): as it is
            continue
        head = ""
        if stripped.startswith(":") and stripped.count(":") >= 2:  # a field (":param x_:"): keep its name
            cut = line.index(":", line.index(":") + 1) + 1
            head, line = line[:cut], line[cut:]
        parts = _CODE.split(line)
        for j in range(0, len(parts), 2):  # the even parts are outside code spans
            parts[j] = _TRAILING_UNDERSCORE.sub(r"\\_", parts[j].replace("|", r"\|"))
        lines[i] = head + "".join(parts)


def setup(app):
    app.connect("autodoc-process-docstring", _escape_plain_text)

"""``python -m treelearn.cli``: the ``treelearn`` command."""
import sys

from treelearn.cli.group import main

sys.exit(main())

"""``python -m rlgraph ...``: the rlgraph program."""

import sys

from rlgraph.program import main

sys.exit(main())

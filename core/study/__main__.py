"""`python -m core.study`: see core.study.cli."""

import sys

from core.study.cli import main

sys.exit(main())

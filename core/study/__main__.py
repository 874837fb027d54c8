"""`python -m core.study`: see core.lab.study.cli."""

import sys

from core.lab.study.cli import main

sys.exit(main())

"""`python -m core.experiment`: the Fault-lab experiment from the command line (core.lab.experiment.cli).

A thin entry module, kept so that every command this lab ever printed (and stored in a results JSON) still runs.
"""

import sys

from core.lab.experiment.cli import main

if __name__ == "__main__":
    sys.exit(main())

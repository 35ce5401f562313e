"""`python -m clew` runs the command line."""

import sys

from clew.cli import main

sys.exit(main())

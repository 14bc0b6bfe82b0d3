"""`python -m triton_sre`: the `triton-sre` command, for an environment whose scripts are not on PATH."""

import sys

from triton_sre.cli import main

if __name__ == "__main__":
    sys.exit(main())

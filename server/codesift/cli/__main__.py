"""`python -m codesift.cli`: the `codesift` command."""

from __future__ import annotations

import sys

from codesift.cli import main

sys.exit(main())

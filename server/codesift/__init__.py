"""codesift: local hybrid code search over one SQLite index, served over LSP and a CLI."""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"

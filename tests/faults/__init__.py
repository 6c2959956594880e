"""Fault tests: codesift under damaged, locked, unreadable or concurrent conditions."""

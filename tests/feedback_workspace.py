"""A workspace where a question's answer shares only identifiers with the code
that its words find: the feedback stream's tests (integration, language server)."""

from __future__ import annotations

QUESTION = "build the shared instance once even when many threads ask"

# The code the question is about says none of its words: what ties it to the
# question is the identifiers it shares with the function that does.
FILES = {
    "pool/shared.py": (
        "def shared_instance(registry, threads):\n"
        '    """Return the shared instance, built once even when many threads ask."""\n'
        "    with registry.creation_guard:\n"
        "        return registry.double_checked_make()\n"
    ),
    "pool/guard.py": (
        "class CreationGuard:\n"
        "    def double_checked_make(self):\n"
        "        if self.value is None:\n"
        "            with self.creation_guard:\n"
        "                if self.value is None:\n"
        "                    self.value = self.factory()\n"
        "        return self.value\n"
    ),
    # Enough other code that the shared identifiers are rare in the index.
    **{
        f"misc/part_{i}.py": (
            f"def convert_{i}(value):\n    return value * {i} + len(str(value))\n\n\n"
            f"def render_{i}(items):\n    return ', '.join(sorted(items))[:{i + 10}]\n"
        )
        for i in range(40)
    },
}

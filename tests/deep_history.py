"""A git repository with a long generated history, written by `git fast-import`
(thousands of commits in about a second): for the tests of the history pass.

Each commit edits one line of one of `files` Python files (a function's body),
every 50th adds a function, every 97th renames a file and every 40th merges a
side branch of two commits, so the walk meets renames and merges as in real
histories. Committer times are one hour apart from START.
"""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

__all__ = ["START", "make_deep_history"]

START = 1_600_000_000


def _function(name: str, value: int) -> list[str]:
    return [
        f"def {name}(ledger):",
        f'    """Charge the ledger {name}."""',
        f"    return {value}",
        "",
    ]


def make_deep_history(root: Path, commits: int, files: int = 12, seed: int = 3) -> Path:
    """A new repository at `root` with `commits` commits on main (merges and their
    side commits included), checked out."""
    rng = random.Random(seed)
    root.mkdir(parents=True)
    for args in (
        ("init", "-q", "-b", "main"),
        ("config", "user.name", "Test"),
        ("config", "user.email", "test@example.com"),
        ("config", "commit.gpgsign", "false"),
    ):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    bodies: dict[str, list[list[str]]] = {
        f"pkg/mod_{i:02d}.py": [_function(f"f{i}_{j}", j) for j in range(4)] for i in range(files)
    }
    out: list[bytes] = []

    def text(path: str) -> bytes:
        return "\n".join(line for fn in bodies[path] for line in fn).encode() + b"\n"

    def commit(
        ref: str,
        mark: int,
        parent: int | None,
        merge: int | None,
        paths: list[str],
        renames: list[tuple[str, str]],
    ) -> None:
        when = START + mark * 3600
        message = f"change {mark}".encode()
        out.append(f"commit {ref}\nmark :{mark}\n".encode())
        out.append(f"committer Test <test@example.com> {when} +0000\n".encode())
        out.append(f"data {len(message)}\n".encode() + message + b"\n")
        if parent is not None:
            out.append(f"from :{parent}\n".encode())
        if merge is not None:
            out.append(f"merge :{merge}\n".encode())
        for old, new in renames:
            out.append(f"R {old} {new}\n".encode())
        for path in paths:
            data = text(path)
            out.append(f"M 100644 inline {path}\ndata {len(data)}\n".encode() + data + b"\n")

    def edit(n: int) -> str:
        path = rng.choice(sorted(bodies))
        fns = bodies[path]
        if n % 50 == 0:
            fns.insert(rng.randrange(len(fns) + 1), _function(f"added_{n}", n))
        else:
            fn = rng.choice(fns)
            fn[2] = f"    return {n}"
        return path

    commit("refs/heads/main", 1, None, None, sorted(bodies), [])
    main, n, renamed = 1, 1, 0
    while n < commits:
        if n % 40 == 0 and commits - n > 3:
            side = main
            touched = set()
            for _ in range(2):
                n += 1
                touched.add(edit(n))
                commit("refs/heads/side", n, side, None, sorted(touched), [])
                side = n
            n += 1
            commit("refs/heads/main", n, main, side, sorted(touched), [])
            main = n
            continue
        n += 1
        renames: list[tuple[str, str]] = []
        if n % 97 == 0:
            old = rng.choice(sorted(bodies))
            renamed += 1
            new = f"pkg/moved_{renamed}_{old.rsplit('/', 1)[1]}"
            bodies[new] = bodies.pop(old)
            renames.append((old, new))
        commit("refs/heads/main", n, main, None, [edit(n)], renames)
        main = n
    subprocess.run(["git", "fast-import", "--quiet"], cwd=root, input=b"".join(out), check=True)
    subprocess.run(["git", "reset", "-q", "--hard", "main"], cwd=root, check=True)
    return root

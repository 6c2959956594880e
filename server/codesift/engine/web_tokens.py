"""Bearer tokens of the HTTP servers (`codesift web`, `codesift mcp --http`).

    store = open_token_store(dsn=None)             # the local token file
    secret = store.add("ana-laptop", "ana")        # shown once, stored hashed
    store.lookup(secret)                           # -> WebToken(name, principal) | None
    store.revoke("ana-laptop")

A token is `csk_` and 32 random bytes (URL-safe base64); only its SHA-256 is
kept (a secret of 256 random bits needs no slow hash). Each token reads as one
principal: with the shared index, that principal's grants are part of every
statement the server runs for the token.

Two stores:
- the local token file (`TokenFile`): JSON, created with mode 0600 and refused
  when others may read or write it; `$CODESIFT_TOKENS`, else
  `$XDG_CONFIG_HOME/codesift/tokens.json` (`~/.config/...`). It is read again
  when it changes, so a revoked token stops working at its next request.
- the shared index's table (`SharedTokens`, store/postgres/tokens.py) for a
  team server started with `--db DSN`: looked up on every request.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import stat
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from codesift.errors import ConfigError, QueryError

if TYPE_CHECKING:
    import psycopg

__all__ = [
    "TOKEN_PREFIX",
    "SharedTokens",
    "TokenFile",
    "TokenInfo",
    "TokenStore",
    "WebToken",
    "default_token_file",
    "new_secret",
    "open_token_store",
    "secret_hash",
]

TOKEN_PREFIX = "csk_"
# Token and principal names: short, printable, no spaces (they appear in logs).
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,62}$")


@dataclass(frozen=True, slots=True)
class WebToken:
    """Who a request is: the token's name and the principal it reads as."""

    name: str
    principal: str


@dataclass(frozen=True, slots=True)
class TokenInfo:
    """A stored token as `codesift token list` shows it (never its secret)."""

    name: str
    principal: str
    created: str


def new_secret() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def secret_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def check_token_name(value: str, what: str) -> str:
    if not _NAME.match(value):
        raise QueryError(
            f"the {what} {value!r} is not a name: 1-63 letters, digits and . _ @ + -,"
            " starting with a letter or digit"
        )
    return value


class TokenStore(Protocol):
    """Where tokens are kept: the local file or the shared index's table."""

    def add(self, name: str, principal: str) -> str:
        """Create a token; its secret (shown once). QueryError if the name is taken."""
        ...

    def revoke(self, name: str) -> bool: ...

    def tokens(self) -> list[TokenInfo]: ...

    def lookup(self, secret: str) -> WebToken | None:
        """The token whose secret is `secret`, or None."""
        ...

    def configured(self) -> bool:
        """Whether any token exists (authentication is then required)."""
        ...

    def describe(self) -> str: ...

    def close(self) -> None: ...


def default_token_file() -> Path:
    given = os.environ.get("CODESIFT_TOKENS", "").strip()
    if given:
        return Path(given).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME", "").strip()
    folder = Path(base).expanduser() if base else Path.home() / ".config"
    return folder / "codesift" / "tokens.json"


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class TokenFile:
    """The local token file (see the module docstring). Thread-safe."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._seen: tuple[int, int, int] | None = None  # inode, size, mtime_ns
        self._entries: list[dict[str, str]] = []
        self._by_hash: dict[str, WebToken] = {}

    def describe(self) -> str:
        return f"token file {self.path}"

    def _check_mode(self, st: os.stat_result) -> None:
        if os.name == "posix" and st.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise ConfigError(
                f"{self.path} may be read or written by other users"
                f" (mode {stat.S_IMODE(st.st_mode):o}): chmod 600 it"
            )

    def _load_locked(self) -> None:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            self._seen, self._entries, self._by_hash = None, [], {}
            return
        except OSError as exc:
            raise ConfigError(f"cannot read {self.path}: {exc.strerror or exc}") from None
        seen = (st.st_ino, st.st_size, st.st_mtime_ns)
        if seen == self._seen:
            return
        self._check_mode(st)
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            entries = [
                {k: str(e[k]) for k in ("name", "principal", "sha256", "created")}
                for e in data["tokens"]
            ]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"{self.path} is not a codesift token file: {exc}") from None
        self._seen, self._entries = seen, entries
        self._by_hash = {e["sha256"]: WebToken(e["name"], e["principal"]) for e in entries}

    def _write_locked(self, entries: list[dict[str, str]]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump({"tokens": entries}, out, indent=1)
                out.write("\n")
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        self._seen = None
        self._load_locked()

    def add(self, name: str, principal: str) -> str:
        check_token_name(name, "token name")
        check_token_name(principal, "principal")
        secret = new_secret()
        with self._lock:
            self._load_locked()
            if any(e["name"] == name for e in self._entries):
                raise QueryError(f"a token named {name} exists: revoke it first")
            entry = {
                "name": name,
                "principal": principal,
                "sha256": secret_hash(secret),
                "created": _now(),
            }
            self._write_locked([*self._entries, entry])
        return secret

    def revoke(self, name: str) -> bool:
        with self._lock:
            self._load_locked()
            kept = [e for e in self._entries if e["name"] != name]
            if len(kept) == len(self._entries):
                return False
            self._write_locked(kept)
            return True

    def tokens(self) -> list[TokenInfo]:
        with self._lock:
            self._load_locked()
            return [TokenInfo(e["name"], e["principal"], e["created"]) for e in self._entries]

    def lookup(self, secret: str) -> WebToken | None:
        with self._lock:
            self._load_locked()
            return self._by_hash.get(secret_hash(secret))

    def configured(self) -> bool:
        with self._lock:
            self._load_locked()
            return bool(self._entries)

    def close(self) -> None:
        pass


class SharedTokens:
    """The tokens of the shared index at `dsn` (one connection, reopened when
    lost; one statement at a time)."""

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self._lock = threading.Lock()
        self._conn: psycopg.Connection[Any] | None = None

    def describe(self) -> str:
        return "the shared index's tokens"

    def _run(self, fn: Any, *args: Any, upgrade: bool = False) -> Any:
        from codesift.engine.shared_connect import connect, one_line

        with self._lock:
            for attempt in (0, 1):
                if self._conn is None or self._conn.closed or self._conn.broken:
                    self._conn = connect(self.dsn, autocommit=True, upgrade=upgrade)
                try:
                    return fn(self._conn, *args)
                except Exception as exc:
                    import psycopg

                    lost = self._conn.closed or self._conn.broken
                    if attempt == 0 and isinstance(exc, psycopg.OperationalError) and lost:
                        continue
                    if isinstance(exc, psycopg.Error):
                        raise ConfigError(f"the shared index's tokens: {one_line(exc)}") from None
                    raise
        raise AssertionError("unreachable")

    def add(self, name: str, principal: str) -> str:
        from codesift.store.postgres.keys import check_name
        from codesift.store.postgres.tokens import add_token

        check_token_name(name, "token name")
        check_name(principal)
        secret = new_secret()
        if not self._run(add_token, name, principal, secret_hash(secret), upgrade=True):
            raise QueryError(f"a token named {name} exists: revoke it first")
        return secret

    def revoke(self, name: str) -> bool:
        from codesift.store.postgres.tokens import remove_token

        return bool(self._run(remove_token, name, upgrade=True))

    def tokens(self) -> list[TokenInfo]:
        from codesift.store.postgres.tokens import list_tokens

        rows = self._run(list_tokens)
        return [TokenInfo(r.name, r.principal, r.created) for r in rows]

    def lookup(self, secret: str) -> WebToken | None:
        from codesift.store.postgres.tokens import token_by_hash

        found = self._run(token_by_hash, secret_hash(secret))
        return WebToken(*found) if found is not None else None

    def configured(self) -> bool:
        from codesift.store.postgres.tokens import any_token

        return bool(self._run(any_token))

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


def open_token_store(dsn: str | None = None, path: Path | None = None) -> TokenStore:
    """The shared index's tokens with `dsn`, else the token file (`path`, else
    `default_token_file()`)."""
    if dsn is not None:
        return SharedTokens(dsn)
    return TokenFile(path if path is not None else default_token_file())

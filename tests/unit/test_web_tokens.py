"""The local token file: secrets shown once and stored hashed, mode 0600,
refused when others may read it; names checked; the loopback rule."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from codesift.engine.web_tokens import TOKEN_PREFIX, TokenFile, default_token_file, secret_hash
from codesift.errors import ConfigError, QueryError
from codesift.serving.guard import RateLimiter
from codesift.serving.listen import check_listen, is_loopback, parse_address


def test_tokens_are_stored_hashed_with_mode_0600(tmp_path: Path) -> None:
    store = TokenFile(tmp_path / "conf" / "tokens.json")
    assert not store.configured()
    secret = store.add("ana-laptop", "ana")
    assert secret.startswith(TOKEN_PREFIX) and len(secret) > 40
    text = store.path.read_text(encoding="utf-8")
    assert secret not in text and secret_hash(secret) in text
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert store.configured()
    found = store.lookup(secret)
    assert found is not None and (found.name, found.principal) == ("ana-laptop", "ana")
    assert store.lookup(secret + "x") is None
    assert [t.name for t in store.tokens()] == ["ana-laptop"]
    with pytest.raises(QueryError, match="exists"):
        store.add("ana-laptop", "ana")
    assert store.revoke("ana-laptop") and not store.revoke("ana-laptop")
    assert store.lookup(secret) is None


def test_another_process_revoking_is_seen(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    server, admin = TokenFile(path), TokenFile(path)
    secret = admin.add("ci", "bot")
    assert server.lookup(secret) is not None
    admin.revoke("ci")
    assert server.lookup(secret) is None


@pytest.mark.skipif(os.name != "posix", reason="POSIX modes")
def test_a_file_others_may_read_is_refused(tmp_path: Path) -> None:
    store = TokenFile(tmp_path / "tokens.json")
    store.add("ana", "ana")
    store.path.chmod(0o644)
    with pytest.raises(ConfigError, match="chmod 600"):
        TokenFile(store.path).configured()


def test_a_damaged_file_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    path.write_text("{nope", encoding="utf-8")
    path.chmod(0o600)
    with pytest.raises(ConfigError, match="not a codesift token file"):
        TokenFile(path).configured()
    path.write_text(json.dumps({"tokens": [{"name": "x"}]}), encoding="utf-8")
    with pytest.raises(ConfigError):
        TokenFile(path).configured()


@pytest.mark.parametrize("name", ["", " ana", "ana bob", "a\nb", "x" * 70, "-lead"])
def test_names_are_checked(tmp_path: Path, name: str) -> None:
    with pytest.raises(QueryError):
        TokenFile(tmp_path / "t.json").add(name, "ana")
    with pytest.raises(QueryError):
        TokenFile(tmp_path / "t.json").add("ok", name)


def test_the_default_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CODESIFT_TOKENS", str(tmp_path / "mine.json"))
    assert default_token_file() == tmp_path / "mine.json"
    monkeypatch.delenv("CODESIFT_TOKENS")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert default_token_file() == tmp_path / "codesift" / "tokens.json"


def test_the_loopback_rule() -> None:
    for host in ("127.0.0.1", "localhost", "::1", "127.0.0.5"):
        assert is_loopback(host)
        check_listen(host, False, "codesift web", "add a token")
    for host in ("0.0.0.0", "::", "192.168.1.4", "example.com", "localhost.example.com"):
        assert not is_loopback(host)
        with pytest.raises(ConfigError, match=f"refuses to listen on {host}"):
            check_listen(host, False, "codesift web", "add a token")
        check_listen(host, True, "codesift web", "add a token")
    assert parse_address("[::1]:8080", "--listen") == ("::1", 8080)
    with pytest.raises(ConfigError):
        parse_address("8080", "--listen")


def test_rate_limiter_buckets() -> None:
    now = [0.0]
    limiter = RateLimiter(rate=2.0, burst=2, clock=lambda: now[0])
    assert limiter.take("a") == 0 and limiter.take("a") == 0
    assert limiter.take("a") > 0
    assert limiter.take("b") == 0
    now[0] += 0.5
    assert limiter.take("a") == 0

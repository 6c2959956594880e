"""Where an HTTP (or TCP) server may listen: loopback unless authentication is on.

A server that answers on an address other people can reach reads them the
code: `codesift web`, `codesift mcp --http` and `codesift serve --tcp` refuse
such an address unless requests must carry a token (`codesift token add`);
the language server has no authentication, so `serve --tcp` stays on loopback.
"""

from __future__ import annotations

import ipaddress

from codesift.errors import ConfigError

__all__ = [
    "DEFAULT_WEB_LISTEN",
    "LOOPBACK_NAMES",
    "check_listen",
    "is_loopback",
    "parse_address",
]

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
# Where `codesift web` listens unless told otherwise.
DEFAULT_WEB_LISTEN = "127.0.0.1:8731"


def parse_address(raw: str, option: str) -> tuple[str, int]:
    """`HOST:PORT` (`127.0.0.1:8765`, `[::1]:8765`); ConfigError for anything else."""
    host, _, port = raw.strip().rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit() or not 0 <= int(port) < 65536:
        raise ConfigError(f"{option} wants HOST:PORT, got {raw!r}")
    return host, int(port)


def is_loopback(host: str) -> bool:
    """Whether `host` is a loopback address (or `localhost`); names other than
    `localhost` are not resolved: they count as reachable from elsewhere."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_listen(host: str, authenticated: bool, command: str, how: str) -> None:
    """ConfigError (one line) when `command` would listen on `host`, which is not
    loopback, without authentication; `how` says how to turn it on."""
    if is_loopback(host) or authenticated:
        return
    raise ConfigError(
        f"{command} refuses to listen on {host}: it is not a loopback address and"
        f" no authentication is configured ({how}); listen on 127.0.0.1 instead"
    )

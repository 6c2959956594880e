"""Shared fixtures: real git repositories and real indexes under tmp_path.

make_repo(files, name="repo", commit=True) -> Path
    A git repository at tmp_path/<name> holding `files` ({relative path: text
    or bytes}), committed unless commit=False.
index_workspace(root, **index_overrides) -> (conn, summary)
    Index `root` with the Indexer into a database outside the workspace
    (one per root, reused by later calls so runs are incremental). Keyword
    arguments override `[index]` settings, e.g. exclude=["*.gen.py"].
git_isolation
    Keeps the developer's git config and any repository above tmp_path out
    of a test (use it with `pytest.mark.usefixtures`).
unprivileged -> Unprivileged
    Runs commands as a user whose file permissions bind: when the tests run as
    root (as CI does), the user `codesift-tester` (CODESIFT_TEST_USER) through
    `setpriv`; otherwise the current user. `unprivileged.tmp_path` is a fresh
    folder that user can write; see Unprivileged.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apsw
import pytest

import codesift
from codesift.config import load_settings
from codesift.embedding import Embedder
from codesift.history.update import update_history
from codesift.indexer import Indexer, IndexSummary
from codesift.store.database import open_database

FileContents = Mapping[str, str | bytes]
MakeRepo = Callable[..., Path]
IndexWorkspace = Callable[..., tuple[apsw.Connection, IndexSummary]]


def write_files(root: Path, files: FileContents) -> None:
    """Write each relative path under `root`, creating folders as needed."""
    for relpath, content in files.items():
        path = root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def run_released_together(script: str, args: Sequence[str], count: int) -> list[tuple[str, str]]:
    """Run `count` Python processes of `script` with `args`, offline, released at the
    same moment (each reads one pipe from its stdin: closing its writing end here
    releases them all), and return each one's (stdout, stderr) once every one has
    exited with status 0."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SERVER_DIR), env.get("PYTHONPATH")]))
    env["HF_HUB_OFFLINE"] = "1"
    release, start = os.pipe()
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", script, *args],
            stdin=release,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            text=True,
        )
        for _ in range(count)
    ]
    os.close(release)
    os.close(start)
    outputs = [process.communicate(timeout=600) for process in processes]
    for process, (_, err) in zip(processes, outputs, strict=True):
        assert process.returncode == 0, err
    return outputs


def run_git(root: Path, *args: str) -> str:
    result = subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True)
    return result.stdout


def commit_all(root: Path, message: str = "snapshot") -> None:
    run_git(root, "add", "-A")
    run_git(root, "commit", "-q", "--allow-empty", "-m", message)


@pytest.fixture
def git_isolation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


@pytest.fixture
def make_repo(tmp_path: Path) -> MakeRepo:
    def make(
        files: FileContents, *, name: str = "repo", commit: bool = True, parent: Path | None = None
    ) -> Path:
        root = (parent if parent is not None else tmp_path) / name
        root.mkdir(parents=True, exist_ok=True)
        run_git(root, "init", "-q")
        run_git(root, "config", "user.name", "Test")
        run_git(root, "config", "user.email", "test@example.com")
        run_git(root, "config", "commit.gpgsign", "false")
        write_files(root, files)
        if commit:
            commit_all(root, "initial")
        return root

    return make


@pytest.fixture
def index_workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[IndexWorkspace]:
    connections: dict[Path, apsw.Connection] = {}

    def index(root: Path, **overrides: Any) -> tuple[apsw.Connection, IndexSummary]:
        root = root.resolve()
        settings = load_settings(root, {"index": overrides} if overrides else None)
        conn = connections.get(root)
        if conn is None:
            if "db_path" in overrides:
                db_path = root / settings.index.db_path  # an absolute path replaces root
            else:
                # Outside the workspace, so it is never a candidate file itself.
                db_path = tmp_path_factory.mktemp("index") / "index.db"
            conn = connections[root] = open_database(db_path)
        summary = Indexer(root, settings, conn).run()
        # The history pass that follows an index run (engine/history.py), to its end.
        update_history(conn, root)
        return conn, summary

    yield index
    for conn in connections.values():
        conn.close()


@pytest.fixture(scope="session")
def embedder(tmp_path_factory: pytest.TempPathFactory) -> Embedder:
    """The real on-device model (offline), loaded once for the whole run."""
    return Embedder(tmp_path_factory.mktemp("model-cache"), max_tokens=128)


# --- Running commands as a user whose file permissions bind --------------------------------

TEST_USER = os.environ.get("CODESIFT_TEST_USER", "codesift-tester")
SERVER_DIR = Path(codesift.__file__).resolve().parent.parent


def running_in_ci() -> bool:
    """True under CI (`CI` set to anything but empty/0/false/no), where a test that
    cannot run must fail instead of skipping."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def skip_or_fail(reason: str) -> None:
    """Skip on a developer machine; fail under CI, where every test must run."""
    if running_in_ci():
        pytest.fail(f"{reason} (CI is set: this test must run here)", pytrace=False)
    pytest.skip(reason)


@dataclass(frozen=True)
class Unprivileged:
    """Runs commands as a user for whom file permissions bind.

    `user` is None when the tests already run as a non-root user: commands then run
    directly. As root, commands run through `setpriv` as `user`. Every command gets
    a private HOME and cache (under `home`), git that trusts folders owned by root
    (safe.directory) and ignores the developer's configuration, and this checkout's
    `codesift` sources on PYTHONPATH. `tmp_path` is a fresh folder for the test that
    the user can write; folders the test creates inside it belong to the test's user
    (root under CI): chmod a folder 0o555 to make it one the user cannot write,
    whoever runs the tests.
    """

    user: str | None
    tmp_path: Path
    home: Path
    git_ceiling: Path

    def env(self, overrides: Mapping[str, str] | None = None) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("XDG_", "GIT_", "PYTEST_")) and k not in ("HOME", "TMPDIR")
        }
        env.update(
            HOME=str(self.home),
            XDG_CACHE_HOME=str(self.home / ".cache"),
            XDG_CONFIG_HOME=str(self.home / ".config"),
            TMPDIR=str(self.home / "tmp"),
            PYTHONPATH=os.pathsep.join(
                p for p in (str(SERVER_DIR), os.environ.get("PYTHONPATH", "")) if p
            ),
            PYTHONDONTWRITEBYTECODE="1",
            HF_HUB_OFFLINE="1",
            GIT_CONFIG_GLOBAL=os.devnull,
            GIT_CONFIG_NOSYSTEM="1",
            GIT_CEILING_DIRECTORIES=str(self.git_ceiling),
            # The test's folders belong to root under CI: let git read them anyway.
            GIT_CONFIG_COUNT="1",
            GIT_CONFIG_KEY_0="safe.directory",
            GIT_CONFIG_VALUE_0="*",
        )
        for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "CLICOLOR_FORCE"):
            env.pop(name, None)
        if overrides:
            env.update(overrides)
        return env

    def argv(self, command: Sequence[str | Path]) -> list[str]:
        args = [str(a) for a in command]
        if self.user is None:
            return args
        return ["setpriv", "--reuid", self.user, "--regid", self.user, "--init-groups", *args]

    def __call__(
        self,
        command: Sequence[str | Path],
        *,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = 180,
    ) -> subprocess.CompletedProcess[str]:
        """Run `command` as the user; never raises on a non-zero exit."""
        return subprocess.run(
            self.argv(command),
            cwd=cwd if cwd is not None else self.tmp_path,
            env=self.env(env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def python(
        self, code: str, *args: str | Path, cwd: Path | None = None, timeout: float = 180
    ) -> subprocess.CompletedProcess[str]:
        """Run Python `code` (with `args` in sys.argv[1:]) in this interpreter, as the user."""
        return self([sys.executable, "-c", code, *args], cwd=cwd, timeout=timeout)

    def codesift(
        self, *args: str | Path, cwd: Path, timeout: float = 180
    ) -> subprocess.CompletedProcess[str]:
        """Run the `codesift` command of this checkout as the user."""
        return self([sys.executable, "-m", "codesift.cli", *args], cwd=cwd, timeout=timeout)


@dataclass(frozen=True)
class _TestUser:
    name: str | None  # None: the current, non-root user
    base: Path  # a folder the user can reach; per-test folders go inside


def _make_own(path: Path, user: str | None, mode: int = 0o755) -> None:
    path.mkdir(parents=True, exist_ok=True)
    if user is not None:
        entry = pwd.getpwnam(user)
        os.chown(path, entry.pw_uid, entry.pw_gid)
    path.chmod(mode)


def _make_removable(root: Path) -> None:
    """Give the owner back write and search permission on every folder under
    `root` (a non-root user cannot delete what a test made read-only)."""
    for folder, dirs, _ in os.walk(root):
        for name in dirs:
            path = Path(folder) / name
            if not path.is_symlink():
                path.chmod(path.stat().st_mode | stat.S_IRWXU)


@pytest.fixture(scope="session")
def _test_user(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_TestUser]:
    if os.geteuid() != 0:
        yield _TestUser(None, tmp_path_factory.mktemp("unprivileged"))
        return
    if shutil.which("setpriv") is None:
        skip_or_fail("running as root and `setpriv` (util-linux) is not installed")
    try:
        pwd.getpwnam(TEST_USER)
    except KeyError:
        skip_or_fail(
            f"running as root and the user {TEST_USER!r} does not exist:"
            f" create it with `useradd -m {TEST_USER}` (.ci/run does)"
        )
    # pytest's own temporary folders are private to root (0700): use a base the
    # user can reach instead.
    base = Path(tempfile.mkdtemp(prefix="codesift-unprivileged-", dir="/tmp"))
    base.chmod(0o755)
    try:
        yield _TestUser(TEST_USER, base)
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def _checked_test_user(_test_user: _TestUser) -> _TestUser:
    """The user, once it is known to run this interpreter and import codesift."""
    home = _test_user.base / "probe-home"
    _make_own(home, _test_user.name)
    probe = Unprivileged(_test_user.name, home, home, _test_user.base)
    # The interpreter the user runs must be this one, stdlib included: a user who can
    # execute a venv's python but not read its base installation (under a 0700 home)
    # silently gets another stdlib, or none.
    code = (
        "import json, os, pathlib, sys, codesift\n"
        "pathlib.Path(sys.argv[1]).write_text('ok')\n"
        "print(json.dumps([sys.version, sys.base_prefix, os.__file__, codesift.__file__]))"
    )
    result = probe.python(code, home / "written")
    ours = [sys.version, sys.base_prefix, os.__file__, codesift.__file__]
    problem = ""
    if result.returncode != 0:
        problem = f"exit {result.returncode}: {result.stderr.strip()}"
    elif json.loads(result.stdout) != ours:
        problem = f"it runs {result.stdout.strip()}, not {json.dumps(ours)}"
    if problem:
        who = _test_user.name or "the current user"
        pytest.fail(
            f"{who} cannot run {sys.executable} (base {sys.base_prefix}) with codesift"
            f" from {SERVER_DIR} and write {home}: every folder on the way needs search (x)"
            f" permission, the venv, the base installation and the sources read permission"
            f" (.ci/run grants them). {problem}",
            pytrace=False,
        )
    return _test_user


@pytest.fixture
def unprivileged(
    _checked_test_user: _TestUser, request: pytest.FixtureRequest
) -> Iterator[Unprivileged]:
    user = _checked_test_user.name
    name = "".join(c if c.isalnum() else "-" for c in request.node.name)[:60]
    folder = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=_checked_test_user.base))
    _make_own(folder, user)
    home = folder / ".home"
    _make_own(home, user)
    _make_own(home / "tmp", user)
    work = folder / "work"
    _make_own(work, user)
    try:
        yield Unprivileged(user, work, home, _checked_test_user.base)
    finally:
        if user is None:
            _make_removable(folder)
        shutil.rmtree(folder, ignore_errors=True)

"""Faults of the `codesift` command: each test reproduces one, run for real in a
subprocess on a git repository the test creates.

- a search that leaves no thread inside onnxruntime at exit (exit 134 before);
- writers that queue on the index's write lock instead of crashing each other,
  readers that search the index as it is while another process writes it;
- one embedder per index;
- a full disk, a damaged index, a folder that is missing or a file: one line,
  exit 2, nothing lost;
- bad options rejected like the server rejects them;
- progress lines when stderr is not a terminal.
"""

from __future__ import annotations

import json
import os
import random
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from codesift.embedding import Embedder
from codesift.embedding.model import cache_dir_from
from codesift.store.locks import IndexLock

pytestmark = pytest.mark.usefixtures("git_isolation")

MakeRepo = Callable[..., Path]
SERVER_DIR = Path(__file__).resolve().parents[2] / "server"

DEADLINE = 180.0


def cli_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(SERVER_DIR), env.get("PYTHONPATH", "")) if p
    )
    env["HF_HUB_OFFLINE"] = "1"
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "CLICOLOR_FORCE"):
        env.pop(name, None)
    return env


def run_cli(
    cwd: Path, *args: str, preexec: Callable[[], None] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "codesift.cli", *args],
        cwd=cwd,
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        check=False,
        preexec_fn=preexec,
    )


def start_cli(cwd: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "codesift.cli", *args],
        cwd=cwd,
        env=cli_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def ok(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stdout}\n{result.stderr}"
    assert "Traceback" not in result.stderr, result.stderr
    return result


def clean_error(result: subprocess.CompletedProcess[str], *words: str) -> str:
    """Exit 2, one `error:` line on stderr, no traceback; returns that line."""
    assert result.returncode == 2, f"exit {result.returncode}\n{result.stdout}\n{result.stderr}"
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error:")]
    assert len(errors) == 1, result.stderr
    for word in words:
        assert word in errors[0], errors[0]
    return errors[0]


def many_functions(count: int) -> dict[str, str]:
    """`count` small Python functions over a few files, 25 to a file (one vector
    each: 300 need the background embedder, which starts above 256)."""
    files: dict[str, str] = {}
    per_file = 25
    for f in range(0, count, per_file):
        body = []
        for i in range(f, min(count, f + per_file)):
            body.append(
                f"def settle_invoice_{i}(amount: int) -> int:\n"
                f'    """Settle invoice number {i} and return the rounded amount."""\n'
                f"    return round(amount * {i + 1} / 7)\n"
            )
        files[f"billing/part_{f // per_file}.py"] = "\n\n".join(body)
    return files


@pytest.fixture
def billing_repo(make_repo: MakeRepo) -> Path:
    return make_repo(
        {
            **many_functions(300),
            "billing/retry.py": (
                "def retry_failed_charge(charge: object, attempts: int = 3) -> bool:\n"
                '    """Retry a failed charge with exponential backoff."""\n'
                "    return attempts > 0\n"
            ),
        }
    )


def db_of(root: Path) -> Path:
    return root / ".codesift" / "index.db"


# -- a search never aborts at exit ------------------------------------------------------


def test_search_without_vectors_exits_0_when_the_query_model_exists(billing_repo: Path) -> None:
    # The int8 query model in the shared model cache: a search used to load it on a
    # daemon thread even when the index had no vectors, and the process aborted
    # (exit 134, "terminate called without an active exception") on its way out.
    embedder = Embedder(cache_dir_from(None), max_tokens=256)
    assert embedder.query_encoder() is not None
    ok(run_cli(billing_repo, "index", "--no-embed", "--quiet"))
    for _ in range(3):
        result = ok(run_cli(billing_repo, "search", "retry_failed_charge", "--no-update"))
        assert "retry_failed_charge" in result.stdout


# -- writers queue; readers never wait for, or break, a writer --------------------------


def test_index_waits_for_the_write_lock_then_runs(billing_repo: Path) -> None:
    ok(run_cli(billing_repo, "index", "--no-embed", "--quiet"))
    (billing_repo / "billing" / "late.py").write_text("def late_arrival() -> None:\n    pass\n")
    lock = IndexLock(db_of(billing_repo), "write", purpose="a test holding the lock")
    assert lock.try_acquire()
    proc = start_cli(billing_repo, "index", "--no-embed")
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()  # blocks until the waiting note (or exit)
        assert "waiting for another codesift process" in first, first
        assert "a test holding the lock" in first
        assert proc.poll() is None  # still waiting: it has not written anything
    finally:
        lock.release()
    out, err = proc.communicate(timeout=DEADLINE)
    assert proc.returncode == 0, err
    assert "indexed 1 file(s)" in out
    found = ok(run_cli(billing_repo, "symbols", "late_arrival", "--no-update", "--json"))
    assert [n["name"] for n in json.loads(found.stdout)["exact"]] == ["late_arrival"]


def test_two_index_runs_at_once_both_succeed(billing_repo: Path) -> None:
    procs = [start_cli(billing_repo, "index", "--no-embed", "--json") for _ in range(2)]
    results = [p.communicate(timeout=DEADLINE) for p in procs]
    for proc, (_out, err) in zip(procs, results, strict=True):
        assert proc.returncode == 0, err
        assert "Traceback" not in err and "locked" not in err, err
    summaries = [json.loads(out) for out, _ in results]
    # One of them indexed every file, the other found nothing left to do.
    assert sorted(s["indexed"] for s in summaries) == [0, summaries[0]["files"]]


def test_search_while_another_process_writes_answers_from_the_index_as_it_is(
    billing_repo: Path,
) -> None:
    ok(run_cli(billing_repo, "index", "--no-embed", "--quiet"))
    (billing_repo / "billing" / "unseen.py").write_text("def not_yet_indexed() -> None:\n    ...\n")
    lock = IndexLock(db_of(billing_repo), "write", purpose="indexing")
    assert lock.try_acquire()
    try:
        result = ok(run_cli(billing_repo, "search", "retry_failed_charge", "--no-embed"))
        assert "retry_failed_charge" in result.stdout
        assert "is updating the index; searching it as it is" in result.stderr
        unseen = ok(run_cli(billing_repo, "symbols", "not_yet_indexed", "--json"))
        assert json.loads(unseen.stdout)["exact"] == []  # the update was left to the writer
    finally:
        lock.release()
    seen = ok(run_cli(billing_repo, "symbols", "not_yet_indexed", "--json"))
    assert [n["name"] for n in json.loads(seen.stdout)["exact"]] == ["not_yet_indexed"]


def test_a_first_search_waits_for_an_index_being_built(billing_repo: Path) -> None:
    lock = IndexLock(db_of(billing_repo), "write", purpose="building")
    db_of(billing_repo).parent.mkdir()
    assert lock.try_acquire()
    proc = start_cli(billing_repo, "search", "retry_failed_charge", "--no-embed")
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()
        assert f"waiting for another codesift process (pid {os.getpid()}: building)" in first
    finally:
        lock.release()
    out, err = proc.communicate(timeout=DEADLINE)
    assert proc.returncode == 0, err
    assert "retry_failed_charge" in out


# -- one embedder per index -----------------------------------------------------------------


def test_no_second_embedder_while_one_runs(billing_repo: Path) -> None:
    ok(run_cli(billing_repo, "index", "--no-embed", "--quiet"))
    lock = IndexLock(db_of(billing_repo), "embed", purpose="codesift embed")
    assert lock.try_acquire()
    try:
        index = json.loads(ok(run_cli(billing_repo, "index", "--json")).stdout)
        assert index["embedding"] == "elsewhere" and index["embedded"] == 0
        embed = json.loads(ok(run_cli(billing_repo, "embed", "--json")).stdout)
        assert embed == {
            "embedded": 0,
            "running_elsewhere": True,
            "holder": f"pid {os.getpid()}: codesift embed",
        }
        search = ok(run_cli(billing_repo, "search", "retry failed charge"))
        assert "being computed by another codesift process" in search.stderr
        # Nobody computed a vector meanwhile, and no embedder was started beside ours.
        status = json.loads(ok(run_cli(billing_repo, "status", "--json")).stdout)
        assert status["vectors"]["embedded"] == 0
        assert lock.holder() == f"pid {os.getpid()}: codesift embed"
    finally:
        lock.release()


# -- bad input: one line, exit 2, nothing created or lost -----------------------------------


def test_root_that_does_not_exist_is_an_error(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such" / "folder"
    for command in ("search", "symbols", "status", "callers"):
        args = (command, "x") if command != "status" else (command,)
        clean_error(run_cli(tmp_path, *args, "--root", str(missing)), "no such folder")
    clean_error(run_cli(tmp_path, "index", str(missing)), "no such folder")
    clean_error(run_cli(tmp_path, "embed", "--root", str(missing)), "no such folder")
    assert not (tmp_path / "no").exists()


def test_index_of_a_file_is_an_error(billing_repo: Path) -> None:
    target = billing_repo / "billing" / "retry.py"
    clean_error(run_cli(billing_repo, "index", str(target)), "is not a folder")
    clean_error(run_cli(billing_repo, "search", "x", "--root", str(target)), "is not a folder")
    assert not (billing_repo / "billing" / "retry.py.codesift").exists()
    assert not db_of(billing_repo).exists()


def test_bad_search_options_are_rejected_before_indexing(billing_repo: Path) -> None:
    clean_error(run_cli(billing_repo, "search", "charge", "-k", "0"), "top_k")
    clean_error(run_cli(billing_repo, "search", "charge", "-k", "201"), "top_k")
    line = clean_error(run_cli(billing_repo, "search", "charge", "--lang", "klingon"), "klingon")
    assert "python" in line and "typescript" in line  # the known languages are listed
    clean_error(run_cli(billing_repo, "symbols", "charge", "--limit", "0"), "--limit")
    assert not db_of(billing_repo).exists()  # nothing was indexed for a rejected request


def test_language_aliases_are_accepted(billing_repo: Path) -> None:
    result = ok(run_cli(billing_repo, "search", "retry_failed_charge", "--lang", "py", "--json"))
    paths = {r["path"] for r in json.loads(result.stdout)["results"]}
    assert "billing/retry.py" in paths


def _limit_file_size(limit: int) -> Callable[[], None]:
    def preexec() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a kill
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return preexec


def test_full_disk_is_one_line_and_the_next_run_completes(billing_repo: Path) -> None:
    # No file may grow past 200 KB: SQLite's write fails as it would on a full disk.
    full = run_cli(
        billing_repo, "index", "--no-embed", "--quiet", preexec=_limit_file_size(200_000)
    )
    line = clean_error(full)
    assert "full" in line or "I/O" in line, line
    result = ok(run_cli(billing_repo, "index", "--no-embed", "--json"))
    summary = json.loads(result.stdout)
    assert summary["files"] == 13
    found = ok(run_cli(billing_repo, "symbols", "settle_invoice_299", "--json", "--no-update"))
    assert [n["name"] for n in json.loads(found.stdout)["exact"]] == ["settle_invoice_299"]


def _damage_middle_pages(db: Path) -> None:
    page = 8192
    size = db.stat().st_size
    pages = size // page
    assert pages > 8, pages
    rng = random.Random(7)
    with db.open("r+b") as handle:
        for number in range(pages // 4, 3 * pages // 4):
            handle.seek(number * page)
            handle.write(rng.randbytes(page))


def test_damaged_index_says_rebuild_everywhere_and_rebuild_recovers(billing_repo: Path) -> None:
    ok(run_cli(billing_repo, "index", "--no-embed", "--quiet"))
    _damage_middle_pages(db_of(billing_repo))
    for args in (
        ("index", "--no-embed"),
        ("status",),
        ("search", "settle invoice amount", "--no-update", "--no-embed"),
        ("symbols", "settle_invoice_12", "--no-update"),
    ):
        clean_error(run_cli(billing_repo, *args), "damaged", "--rebuild")
    rebuilt = ok(run_cli(billing_repo, "index", "--rebuild", "--no-embed"))
    assert "moved the old index aside" in rebuilt.stderr
    assert list(db_of(billing_repo).parent.glob("index.db.bad-*"))  # kept, never deleted
    found = ok(run_cli(billing_repo, "symbols", "settle_invoice_12", "--json", "--no-update"))
    assert [n["name"] for n in json.loads(found.stdout)["exact"]] == ["settle_invoice_12"]


# -- progress when stderr is not a terminal ---------------------------------------------


def _progress_lines(stderr: str, what: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith(f"codesift: {what}")]


def test_index_prints_progress_lines_when_not_on_a_terminal(billing_repo: Path) -> None:
    result = ok(run_cli(billing_repo, "index", "--no-embed", "--progress-every", "0"))
    lines = _progress_lines(result.stderr, "indexing")
    assert lines, result.stderr
    assert any("/13 files" in line for line in lines), lines
    # The counts are the summary's alone (one source): the closing line has none.
    assert lines[-1].startswith("codesift: indexing done in"), lines
    # Phases without a count of their own are said as they start.
    assert "codesift: indexing: resolving calls" in lines, lines
    assert "indexed 13 file(s)" in result.stdout, result.stdout
    quiet = ok(run_cli(billing_repo, "index", "--no-embed", "--progress-every", "0", "--quiet"))
    assert not _progress_lines(quiet.stderr, "indexing")


def test_embedding_prints_progress_lines_with_a_rate(make_repo: MakeRepo) -> None:
    root = make_repo(many_functions(20))
    result = ok(run_cli(root, "index", "--progress-every", "0"))
    lines = _progress_lines(result.stderr, "embedding")
    assert lines, result.stderr
    assert any("chunks/s" in line and "/20 chunks" in line for line in lines), lines
    assert lines[-1].startswith("codesift: embedding done in"), lines
    # The static first tier, before MiniLM's vectors, has its own progress.
    static = _progress_lines(result.stderr, "static vectors")
    assert any("/20 chunks" in line for line in static), result.stderr
    assert static[-1].startswith("codesift: static vectors done in"), static
    status: dict[str, Any] = json.loads(ok(run_cli(root, "status", "--json")).stdout)
    assert status["vectors"]["embedded"] == status["vectors"]["embeddable"] == 20


def _sigint_as_from_a_terminal() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_an_interrupted_embed_says_what_it_keeps(make_repo: MakeRepo) -> None:
    """Ctrl-C during `codesift embed`: no "done" line, and the closing sentence
    speaks of what an embed keeps (vectors), not of files."""
    root = make_repo(many_functions(400))
    ok(run_cli(root, "index", "--no-embed", "--quiet"))
    env = dict(os.environ, PYTHONPATH=str(SERVER_DIR), HF_HUB_OFFLINE="1")
    process = subprocess.Popen(
        [sys.executable, "-m", "codesift.cli", "embed", "--progress-every", "0"],
        cwd=root,
        env=env,
        stderr=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        # As from a terminal: a suite started in the background (`cmd &` in a
        # script) runs with SIGINT ignored, which the child would inherit.
        preexec_fn=_sigint_as_from_a_terminal,
    )
    assert process.stderr is not None
    seen: list[str] = []
    for line in process.stderr:  # the first progress line: a batch is written
        seen.append(line)
        if line.startswith("codesift: embedding") and "/" in line:
            break
    process.send_signal(signal.SIGINT)
    _, rest = process.communicate(timeout=120)
    stderr = "".join(seen) + rest
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert "embedding done" not in stderr, stderr
    assert "codesift: embedding interrupted after" in stderr, stderr
    assert "interrupted; the index keeps the vectors computed so far" in stderr, stderr
    assert "every file" not in stderr, stderr


def test_the_background_embedder_logs_what_it_does_and_when_it_ends(
    billing_repo: Path,
) -> None:
    """`codesift index` leaves MiniLM's vectors to a detached `codesift embed`
    (more than 256 missing): its log says when it started, and its summary when it
    ended (it was started quiet: an empty log for minutes)."""
    ok(run_cli(billing_repo, "index"))
    log_path = billing_repo / ".codesift" / "embed.log"
    lines: list[str] = []
    deadline = time.monotonic() + DEADLINE
    while not any(line.startswith("embedded ") for line in lines):
        assert time.monotonic() < deadline, f"no summary in embed.log: {lines!r}"
        lines = log_path.read_text().splitlines() if log_path.exists() else []
        time.sleep(0.2)  # polling the child's log file; the deadline is the failure
    assert "codesift embed --root" in lines[0]
    assert lines[-1].startswith("embedded ") and "vectors cover 100%" in lines[-1], lines

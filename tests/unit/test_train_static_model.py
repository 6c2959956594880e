"""tools/train_static_model.py and its corpus (tools/static_model_sources.py): pinned
Debian packages, none of them a measuring stick's (the generated set's packages, a
development set's code or code its corpora vendor), files chosen by kind, the JDK's
stick members left out."""

from __future__ import annotations

import zipfile
from pathlib import Path
from types import ModuleType

import pytest

from script_module import load_script

TOOLS = Path(__file__).resolve().parents[2] / "tools"


def _tool() -> ModuleType:
    return load_script(TOOLS / "train_static_model.py", "train_static_model")


def _sources() -> ModuleType:
    return load_script(TOOLS / "static_model_sources.py", "static_model_sources", register=True)


def test_every_source_has_pinned_packages_and_none_is_a_stick_corpus() -> None:
    sources = _sources()
    names = [source.name for source in sources.SOURCES]
    assert names == list(sources.SUFFIXES)
    for source in sources.SOURCES:
        assert source.packages, source.name
        for package in source.packages:
            assert len(package.sha256) == 64 and package.version
    assert sources.stick_overlap() == []
    # The generated set's JDK members are the ones left out of the Java sample.
    assert "java.base/java/util/concurrent/" in sources.JDK_EXCLUDED
    assert "java.base/java/time/" in sources.JDK_EXCLUDED


def test_a_stick_package_in_the_corpus_stops_the_staging(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tool = _tool()
    sources = _sources()
    stick = sources.Package("python3-click", "8.1.3-2", "0" * 64)
    monkeypatch.setattr(sources, "SOURCES", (sources.Source("python", (stick,), (".py",), 1),))
    monkeypatch.setattr(tool, "stick_overlap", sources.stick_overlap)
    with pytest.raises(SystemExit, match="of a measuring stick: python3-click"):
        tool.stage_corpus(tmp_path / "staging")
    assert not (tmp_path / "staging").exists()
    # So does a package that holds code a development-set corpus carries.
    vendored = sources.Package("golang-golang-x-net-dev", "1:0.7.0+dfsg-1", "0" * 64)
    monkeypatch.setattr(sources, "SOURCES", (sources.Source("go", (vendored,), (".go",), 1),))
    assert sources.stick_overlap() == ["golang-golang-x-net-dev"]


def test_a_malformed_package_line_names_its_line(tmp_path: Path) -> None:
    sources = _sources()
    listing = tmp_path / "packages.txt"
    listing.write_text("# pins\n[python]\npython3-six 1.16.0-4 " + "a" * 64 + "\nbroken\n")
    with pytest.raises(ValueError, match=r"packages\.txt:4"):
        sources.read_packages(listing)
    listing.write_text("[go]\ngolang-x 1.0 " + "b" * 64 + "\n")
    parsed = sources.read_packages(listing)
    assert parsed == {"go": (sources.Package("golang-x", "1.0", "b" * 64),)}


def test_files_are_chosen_by_kind_size_and_folder(tmp_path: Path) -> None:
    sources = _sources()
    root = tmp_path / "pkg"
    body = "x = 1\n" * 60
    files = {
        "usr/lib/mod.py": body,
        "usr/lib/tests/test_mod.py": body,  # a test folder: left out
        "usr/lib/tiny.py": "x = 1\n",  # under 200 bytes
        "usr/share/app.min.js": body,  # minified
        "usr/share/app.js": body,
        "usr/bin/tool": "#!/bin/sh\n" + "echo hi\n" * 40,  # a shell script, no suffix
        "usr/bin/data": "plain text\n" * 40,  # no suffix, no #! line
        "usr/bin/run.sh": "#!/bin/bash\n" + "echo hi\n" * 40,
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    found = lambda suffixes: [  # noqa: E731
        p.relative_to(root).as_posix() for p in sources.source_files(root, suffixes)
    ]
    assert found((".py",)) == ["usr/lib/mod.py"]
    assert found((".js",)) == ["usr/share/app.js"]
    assert found(("", ".sh")) == ["usr/bin/run.sh", "usr/bin/tool"]


def test_the_java_sample_leaves_the_sticks_members_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tool = _tool()
    root = tmp_path / "jdk"
    archive_path = root / tool.JDK_ZIP
    archive_path.parent.mkdir(parents=True)
    members = [
        "java.base/java/util/concurrent/Executor.java",
        "java.base/java/time/Instant.java",
        "java.net.http/java/net/http/HttpClient.java",
        "java.base/java/util/List.java",
        "java.base/java/io/File.java",
    ]
    with zipfile.ZipFile(archive_path, "w") as archive:
        for member in members:
            archive.writestr(member, "class X {}\n")
    monkeypatch.setattr(tool, "unpacked", lambda package, work: root)
    assert tool._stage_jdk(tmp_path / "java") == 2
    staged = sorted(p.relative_to(tmp_path / "java").as_posix() for p in tmp_path.rglob("*.java"))
    assert staged == ["java.base/java/io/File.java", "java.base/java/util/List.java"]


def test_corpus_counts_are_compared_with_the_shipped_manifest() -> None:
    tool = _tool()
    manifest = tool.json.loads((tool.STATIC_DIR / "static.json").read_text(encoding="utf-8"))
    shipped: dict[str, int] = manifest["corpus"]["files"]
    assert tool.corpus_differences(dict(shipped)) == []
    assert tool.corpus_differences({**shipped, "go": 0}) == [f"go {shipped['go']} -> 0"]

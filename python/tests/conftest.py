"""Shared helpers: the repository's paths and the command line built by `cargo build --release`
(or `cargo test --release`), whose outputs the Python results are compared with."""

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
CLI = Path(os.environ.get("EVALSIM_CLI", ROOT / "target" / "release" / "evalsim"))


@pytest.fixture(scope="session")
def cli():
    """Runs the evalsim binary: cli(*args) -> CompletedProcess (text)."""
    if not CLI.is_file():
        pytest.fail(f"{CLI} is missing: build it with `cargo build --release` (or set EVALSIM_CLI)")

    def run(*args, cwd=None):
        return subprocess.run(
            [str(CLI), *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=600
        )

    return run


@pytest.fixture
def cli_files(cli, tmp_path):
    """Runs a command with --out into a fresh folder and returns {file name: bytes}."""

    def run(*args):
        out = tmp_path / "cli-out"
        done = cli(*args, "--out", out, "--quiet")
        assert done.returncode in (0, 1), done.stderr
        return {p.name: p.read_bytes() for p in out.iterdir() if not p.name.startswith(".")}

    return run

"""Run the starter bots of sample_bots/starters/ as real processes on loopback ports, as their READMEs
say; the Go starter is built once per test session into a temporary folder."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STARTERS = ROOT / "sample_bots" / "starters"
LANGUAGES = ("python", "javascript", "go")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def go_env(cache: Path) -> dict[str, str]:
    """Go needs a writable build cache; CI's HOME may not be."""
    return {**os.environ, "GOCACHE": str(cache / "gocache"), "GOPATH": str(cache / "gopath"), "GOFLAGS": "-mod=mod",
            "GO111MODULE": "on", "CGO_ENABLED": "0"}


def build_go(out_dir: Path) -> Path:
    """``go build`` of the Go starter; fails the test (not skips) when Go is missing: CI installs it."""
    go = shutil.which("go")
    assert go is not None, "go is not installed (scripts/lib.sh installs golang-go)"
    binary = out_dir / "starter-go"
    subprocess.run([go, "build", "-o", str(binary), "."], cwd=STARTERS / "go", env=go_env(out_dir), check=True,
                   timeout=300)
    return binary


def command(language: str, port: int, secret: str, go_binary: Path | None) -> tuple[list[str], Path]:
    """The command line that serves ``language``'s starter on ``port``, and the folder to run it in."""
    if language == "python":
        return [sys.executable, "bot.py", "--port", str(port), "--secret", secret], STARTERS / "python"
    if language == "javascript":
        node = shutil.which("node") or shutil.which("nodejs")
        assert node is not None, "node is not installed (scripts/lib.sh installs nodejs)"
        return [node, "bot.js", "--port", str(port), "--secret", secret], STARTERS / "javascript"
    assert go_binary is not None
    return [str(go_binary), "-port", str(port), "-secret", secret], STARTERS / "go"


def wait_listening(port: int, proc: subprocess.Popen, timeout_s: float = 20.0) -> None:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        assert proc.poll() is None, f"the bot exited with {proc.returncode}"
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"nothing listens on port {port} after {timeout_s} s")


@contextmanager
def running(cmd: list[str], cwd: Path, port: int) -> Iterator[str]:
    """The process serving on ``port``; stopped (and reaped) on the way out."""
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_listening(port, proc)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextmanager
def starter(language: str, secret: str, go_binary: Path | None = None) -> Iterator[str]:
    port = free_port()
    cmd, cwd = command(language, port, secret, go_binary)
    with running(cmd, cwd, port) as url:
        yield url

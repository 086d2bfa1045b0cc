"""Children of ``arena up`` die with it, however it dies: the lifeline pipe (workers and what they fork)
and the parent-death signal kept across exec (the embedded redis-server)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import psutil
import pytest

from arena.runtime.lifeline import main, set_parent_death_signal


def _run_and_sigkill(parent_code: str) -> list[psutil.Process]:
    """Run ``parent_code`` (it prints the pids to watch on one line), SIGKILL it, return those processes."""
    parent = subprocess.Popen([sys.executable, "-c", textwrap.dedent(parent_code)], stdout=subprocess.PIPE,
                              text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        watched = [psutil.Process(int(pid)) for pid in parent.stdout.readline().split()]
        assert watched
        parent.kill()
        parent.wait()
        _gone, alive = psutil.wait_procs(watched, timeout=5)
    finally:
        parent.stdout.close()
    for proc in alive:
        proc.kill()
    return alive


def test_a_worker_and_the_process_it_forked_die_when_arena_up_is_sigkilled() -> None:
    """What a worker is to ``arena up``: a child in its own process group holding the lifeline, that
    forked a process of its own (RQ's scheduler), which inherits no lifeline watcher thread."""
    child = (
        "import os, time; from arena.runtime.lifeline import watch_lifeline_from_env; watch_lifeline_from_env(); "
        "pid = os.fork(); "
        "time.sleep(60) if pid == 0 else (print(os.getpid(), pid, flush=True), time.sleep(60))"
    )
    alive = _run_and_sigkill(f"""
        import os, sys, time
        import psutil
        from arena.runtime.supervisor import Supervisor
        supervisor = Supervisor(dict(os.environ), 1, command=[sys.executable, "-c", {child!r}],
                                say=lambda line: None)
        supervisor.start()
        proc = supervisor.slots[0].proc
        time.sleep(1.5)
        kids = psutil.Process(proc.pid).children()
        print(proc.pid, *[k.pid for k in kids], flush=True)
        time.sleep(60)
    """)
    assert alive == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux only")
def test_a_command_started_through_the_lifeline_dies_with_its_parent() -> None:
    alive = _run_and_sigkill("""
        import os, subprocess, sys, time
        proc = subprocess.Popen([sys.executable, "-m", "arena.runtime.lifeline", str(os.getpid()), "--",
                                 "/bin/sleep", "60"])
        time.sleep(0.5)
        print(proc.pid, flush=True)
        time.sleep(60)
    """)
    assert alive == []


def test_set_parent_death_signal_works_on_linux() -> None:
    assert set_parent_death_signal(0) is sys.platform.startswith("linux")  # 0: clears it again


def test_the_lifeline_wrapper_refuses_a_malformed_command_line(capsys) -> None:
    assert main(["not-a-pid", "--", "/bin/true"]) == 2
    assert main([str(os.getpid())]) == 2
    assert "usage" in capsys.readouterr().err


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="SIGIO on a pipe's last close is Linux's")
def test_a_worker_that_cannot_run_its_watching_thread_still_dies_with_arena_up() -> None:
    """Regression (CI, a loaded machine): two workers still importing the command line outlived a SIGKILLed
    ``arena up`` by more than 5 s, their watching thread kept from the GIL. The kernel now ends the group by
    itself: here a child that never starts the thread, never reads the pipe, and forked a process of its
    own, each spinning, dies with its whole group the moment the pipe's writer is gone."""
    read, write = os.pipe()
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import os, time
        from arena.runtime.lifeline import signal_group_on_eof
        assert signal_group_on_eof({read})
        if os.fork() == 0:
            print(os.getpid(), flush=True)
        while True:
            pass
    """)], pass_fds=(read,), process_group=0, stdout=subprocess.PIPE, text=True)
    os.close(read)
    try:
        forked = psutil.Process(int(child.stdout.readline()))
        os.close(write)
        assert child.wait(timeout=5) == -29  # SIGIO: the kernel's, no Python involved
        _gone, alive = psutil.wait_procs([forked], timeout=5)
        assert alive == []
    finally:
        child.stdout.close()
        if child.poll() is None:
            os.killpg(child.pid, 9)
            child.wait()

"""The ladder scheduler's lock names its holder (arena.runtime.ladder_runner.holder_token): an operator,
and the cluster test that cuts off the host of the active scheduler, can tell where it runs."""

from __future__ import annotations

import os
import socket
import threading
import time
from dataclasses import replace

from arena.composition import Context
from arena.runtime.ladder_runner import LadderRunner
from arena.runtime.queue import LADDER_LOCK


def test_the_active_schedulers_lock_says_which_host_and_process_hold_it(queued_context) -> None:
    context = Context(settings=replace(queued_context.settings, ladder=True), db=queued_context.db,
                      queue=queued_context.queue)
    key = LADDER_LOCK.format(queue=context.settings.queue_name)
    stop = threading.Event()
    runner = threading.Thread(target=LadderRunner(context, say=lambda _line: None).run, args=(stop,))
    runner.start()
    try:
        deadline = time.monotonic() + 10
        while context.queue.redis.get(key) is None and time.monotonic() < deadline:
            time.sleep(0.02)
        value = context.queue.redis.get(key)
    finally:
        stop.set()
        context.queue.wake_ladder()
        runner.join(timeout=10)
    assert value is not None and value.decode().startswith(f"{socket.gethostname()}:{os.getpid()}:")
    assert context.queue.redis.get(key) is None  # released when it stopped

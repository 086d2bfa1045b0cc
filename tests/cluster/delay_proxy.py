"""A slow link in user space (netem is not available): a TCP proxy that holds every chunk for a random
25-100 ms in each direction, in order, so a round trip through it takes 50-200 ms.

    python -m tests.cluster.delay_proxy --listen 10.77.0.130 --target 10.77.0.131 --ports 9001 9002
"""

from __future__ import annotations

import argparse
import asyncio
import random


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, low_s: float, high_s: float,
                rng: random.Random) -> None:
    """Copy one direction, each chunk due at its arrival plus a random delay, never before the one ahead."""
    loop = asyncio.get_running_loop()
    due_last = 0.0
    chunks: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

    async def deliver() -> None:
        while True:
            due, data = await chunks.get()
            await asyncio.sleep(max(0.0, due - loop.time()))
            if not data:
                break
            writer.write(data)
            await writer.drain()
        writer.close()

    sender = asyncio.create_task(deliver())
    try:
        while True:
            data = await reader.read(65536)
            due_last = max(due_last, loop.time() + rng.uniform(low_s, high_s))
            await chunks.put((due_last, data))
            if not data:
                break
        await sender
    except (ConnectionError, OSError):
        sender.cancel()
        writer.close()


async def serve(listen: str, target: str, ports: list[int], low_ms: float, high_ms: float) -> None:
    rng = random.Random(7)

    def handler(port: int):  # type: ignore[no-untyped-def]
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                up_reader, up_writer = await asyncio.open_connection(target, port)
            except OSError:
                writer.close()
                return
            await asyncio.gather(_pipe(reader, up_writer, low_ms / 1000, high_ms / 1000, rng),
                                 _pipe(up_reader, writer, low_ms / 1000, high_ms / 1000, rng),
                                 return_exceptions=True)
        return handle

    servers = [await asyncio.start_server(handler(port), listen, port) for port in ports]
    print("delaying", ports, flush=True)
    await asyncio.gather(*(server.serve_forever() for server in servers))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--listen", required=True)
    parser.add_argument("--target", required=True)
    parser.add_argument("--ports", type=int, nargs="+", required=True)
    parser.add_argument("--low-ms", type=float, default=25)
    parser.add_argument("--high-ms", type=float, default=100)
    args = parser.parse_args()
    asyncio.run(serve(args.listen, args.target, args.ports, args.low_ms, args.high_ms))


if __name__ == "__main__":
    main()

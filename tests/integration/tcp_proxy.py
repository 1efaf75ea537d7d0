#!/usr/bin/env python3
"""A TCP proxy on loopback for tests: listens on one port per target and
copies bytes both ways, so a test can cut a process off by killing the
proxy (its connections drop, new ones are refused) and heal it by starting
it again on the same ports.

    tcp_proxy.py PORTFILE LISTEN:TARGET [LISTEN:TARGET ...]

LISTEN 0 picks a free port; PORTFILE gets the ports listened on, one line,
space-separated, written once every listener is up."""
import asyncio
import os
import sys


async def pipe(reader, writer):
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        try:
            writer.close()
        except OSError:
            pass


def handler(target):
    async def on_client(reader, writer):
        try:
            tr, tw = await asyncio.open_connection("127.0.0.1", target)
        except OSError:
            writer.close()
            return
        await asyncio.gather(pipe(reader, tw), pipe(tr, writer))
    return on_client


async def main():
    portfile, pairs = sys.argv[1], sys.argv[2:]
    servers, ports = [], []
    for p in pairs:
        listen, target = (int(x) for x in p.split(":"))
        s = await asyncio.start_server(handler(target), "127.0.0.1", listen, reuse_address=True)
        servers.append(s)
        ports.append(str(s.sockets[0].getsockname()[1]))
    tmp = portfile + ".tmp"
    with open(tmp, "w") as f:
        f.write(" ".join(ports) + "\n")
    os.rename(tmp, portfile)
    await asyncio.gather(*(s.serve_forever() for s in servers))


if __name__ == "__main__":
    asyncio.run(main())

"""A TCP proxy in front of a server, for tests of what the client does when the network fails."""

from __future__ import annotations

import asyncio


class Proxy:
    """A TCP proxy to the server whose connections can be cut (a network failure: the server and
    its running reply carry on)."""

    def __init__(self, upstream: str) -> None:
        self.upstream_host, port = upstream.rsplit(":", 1)
        self.upstream_port = int(port)
        self.writers: set[asyncio.StreamWriter] = set()
        #: Connections accepted from clients so far.
        self.accepted = 0
        self.server: asyncio.Server | None = None
        #: While set, bytes from the server are dropped (the client hears nothing back).
        self.mute_downstream = False
        #: Seconds each connection's first bytes from the server are held back (a server slow to
        #: answer the HTTP/2 handshake).
        self.first_reply_delay = 0.0

    async def start(self) -> str:
        self.server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        return f"127.0.0.1:{port}"

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        up_reader, up_writer = await asyncio.open_connection(self.upstream_host, self.upstream_port)
        self.writers |= {writer, up_writer}

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter, down: bool) -> None:
            held = down and self.first_reply_delay > 0
            try:
                while data := await src.read(65536):
                    if held:
                        held = False
                        await asyncio.sleep(self.first_reply_delay)
                    if down and self.mute_downstream:
                        continue
                    dst.write(data)
                    await dst.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                dst.close()

        try:
            await asyncio.gather(pipe(reader, up_writer, False), pipe(up_reader, writer, True))
        except asyncio.CancelledError:  # the loop is closing
            pass

    def cut(self) -> None:
        """Closes every open connection (both sides) at once."""
        for writer in self.writers:
            writer.transport.abort()
        self.writers.clear()

    async def close(self) -> None:
        self.cut()
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()

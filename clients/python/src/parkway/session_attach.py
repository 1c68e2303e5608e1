"""Attaching an :class:`parkway.AsyncSession`'s ``Chat`` stream: the attach handshake, and the
re-attach with backoff per the session's :class:`ReconnectPolicy` after the stream broke.

:class:`SessionAttach` is the first of the parts :class:`parkway.AsyncSession` is built from, each
a base class of the next (:class:`parkway.session_reader.SessionReader`,
:class:`parkway.session_inputs.SessionInputs`, :class:`parkway.session_events.SessionEvents`): they
all work on the one session object and its state, which ``AsyncSession.__init__`` sets.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

import grpc

from parkway.errors import DeadlineExceeded, ParkwayError, from_rpc_error
from parkway.session_core import Reattach, ReconnectPolicy, SessionCore
from parkway.v1 import events_pb2

if TYPE_CHECKING:
    from parkway.client import AsyncClient

__all__ = ["SessionAttach"]

log = logging.getLogger("parkway")


class SessionAttach:
    """Opens the session's ``Chat`` streams, attached after its last seq."""

    # The session's state used here (set and described in AsyncSession.__init__).
    _client: AsyncClient
    _id: str
    _core: SessionCore
    _policy: ReconnectPolicy
    _timeout: float

    async def _attach(
        self, timeout: float, *, wait_for_ready: bool = False
    ) -> grpc.aio.StreamStreamCall[Any, Any]:
        """Opens a Chat stream, sends attach with after_seq = last_seq, and waits for its ack.
        With `wait_for_ready`, a channel that is (re)connecting is waited for within `timeout`
        instead of failing at once."""
        call: grpc.aio.StreamStreamCall[Any, Any] = self._client.agent_service.Chat(
            metadata=self._client.metadata(), wait_for_ready=wait_for_ready
        )
        hello = self._core.hello()
        try:
            await asyncio.wait_for(self._attach_handshake(call, hello), timeout)
        except ParkwayError:
            call.cancel()
            raise
        except asyncio.TimeoutError:
            call.cancel()
            raise DeadlineExceeded(
                f"attach to {self._id} was not acknowledged within {timeout:g}s"
            ) from None
        except BaseException:
            call.cancel()
            raise
        return call

    @staticmethod
    async def _attach_handshake(
        call: grpc.aio.StreamStreamCall[Any, Any], hello: events_pb2.ClientEvent
    ) -> None:
        try:
            await call.write(hello)
            first = await call.read()
        except grpc.aio.AioRpcError as err:
            raise from_rpc_error(err) from None
        SessionCore.check_attached(hello, None if first is grpc.aio.EOF else first)

    async def _reattach(self, error: ParkwayError) -> grpc.aio.StreamStreamCall[Any, Any]:
        """Re-attaches with backoff per the policy; raises the last error when it gives up."""
        attempt = Reattach(self._policy, self._id, error)
        while True:
            await asyncio.sleep(attempt.delay())
            try:
                return await self._attach(
                    attempt.attempt_timeout(self._timeout), wait_for_ready=True
                )
            except ParkwayError as err:
                if attempt.failed(err) == "lower":
                    try:
                        self._core.lower_last_seq(await self._server_last_seq())
                    except ParkwayError as lookup:
                        attempt.last = lookup

    async def _server_last_seq(self) -> int:
        session = await self._client.get_session(self._id)
        log.warning(
            "parkway: session %s: the server's last seq is %d but this client saw %d; "
            "resuming from the server's",
            self._id,
            session.last_seq,
            self._core.last_seq,
        )
        return session.last_seq

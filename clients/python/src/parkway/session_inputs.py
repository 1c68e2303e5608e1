"""The inputs of an :class:`parkway.AsyncSession`: :meth:`SessionInputs.send_input` writes an input
and waits for the server's acknowledgement (an input whose acknowledgement a break lost is sent
again on the re-attached stream, with the same request id), and the helpers built on it
(``send_message``, ``confirm``, ``deny``, ``confirm_all``, ``submit_result``, ``answer``,
``submit_results``, ``interrupt``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

import grpc

from parkway import inputs
from parkway.errors import Cancelled, DeadlineExceeded, ParkwayError, Unavailable
from parkway.session_reader import SessionReader
from parkway.v1 import content_pb2, events_pb2

__all__ = ["SessionInputs"]


class SessionInputs(SessionReader):
    """Sends the session's inputs and waits for their acknowledgements."""

    async def send_input(
        self, event: events_pb2.ClientEvent, *, timeout: float | None = None
    ) -> None:
        """Sends one input (its ``session_id`` and ``request_id`` are filled in when empty) and
        waits for the server's acknowledgement; raises the refusal as a ``ParkwayError``.

        While the session re-attaches, the input waits for the new stream; an input the old stream
        did not acknowledge is sent again with the same ``request_id`` (the server applies it once).
        ``DeadlineExceeded`` after ``timeout`` seconds (default: the client's timeout) without an
        acknowledgement: the input may or may not have been applied, and it is not sent again.
        ``Unavailable`` when the session could not re-attach; ``Cancelled`` when it was closed.
        """
        wait = self._timeout if timeout is None else timeout
        deadline = time.monotonic() + wait
        message = self._core.prepare(event)
        self._raise_if_over()
        try:
            await asyncio.wait_for(self._ready.wait(), wait)
        except asyncio.TimeoutError:
            raise DeadlineExceeded(
                f"session {self._id} did not reconnect within {wait:g}s; the input was not sent"
            ) from None
        self._raise_if_over()
        call = self._call
        assert call is not None
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._acks[message.request_id] = (message, future)
        try:
            await call.write(message)
        except (grpc.aio.AioRpcError, asyncio.InvalidStateError, grpc.aio.UsageError):
            pass  # the stream broke: the reader re-attaches and sends it again (or fails it)
        if self._direct and not self._direct_reading:
            self._end_direct()  # nobody reads in next_event: the reader task reads the ack
        try:
            await asyncio.wait_for(asyncio.shield(future), max(0.0, deadline - time.monotonic()))
        except ParkwayError:
            raise
        except asyncio.TimeoutError:
            self._acks.pop(message.request_id, None)
            raise DeadlineExceeded(
                f"the server did not acknowledge the input within {wait:g}s; "
                "it may or may not have been applied"
            ) from None

    def _raise_if_over(self) -> None:
        if self._closed:
            raise Cancelled("the session was closed")
        if self._end is not None:
            if self._end.error is not None:
                raise self._end.error
            raise Unavailable("the server ended the stream")

    async def send_message(self, text: str, *, timeout: float | None = None) -> None:
        """Sends a user message (starting a reply) without reading events: read them with
        :meth:`until_settled` or :meth:`events`. Refused with ``FailedPrecondition`` while a reply
        runs or is parked."""
        await self.send_input(self._core.message(text), timeout=timeout)

    async def confirm(
        self,
        call: inputs.CallRef,
        rule: Literal["suggested"] | inputs.RuleSpec | Sequence[inputs.RuleSpec] | None = None,
        *,
        edited_input: Mapping[str, Any] | str | None = None,
        scope: inputs.ScopeName | int = "session",
        timeout: float | None = None,
    ) -> None:
        """Allows a call awaiting confirmation (see :func:`parkway.inputs.confirmation` for
        ``rule``, ``edited_input`` and ``scope``; a call id this session has seen resolves to its
        announced ToolCallBlock, so ``rule="suggested"`` works with ids too). Raises
        ``FailedPrecondition`` / ``NotFound`` when the call is not awaiting confirmation."""
        await self.send_input(self._core.confirm(call, rule, edited_input, scope), timeout=timeout)

    async def deny(
        self, call: inputs.CallRef, reason: str = "", *, timeout: float | None = None
    ) -> None:
        """Denies a call awaiting confirmation; the model sees ``reason``."""
        await self.send_input(self._core.deny(call, reason), timeout=timeout)

    async def confirm_all(
        self,
        results: Iterable[events_pb2.ConfirmResult],
        *,
        reply_id: str = "",
        timeout: float | None = None,
    ) -> None:
        """Answers several confirmations in one input (build them with
        :func:`parkway.inputs.confirmation` / :func:`parkway.inputs.denial`); unanswered calls stay
        pending. All or nothing: a refusal changes nothing."""
        await self.send_input(self._core.confirm_all(results, reply_id), timeout=timeout)

    async def submit_result(
        self,
        call: inputs.CallRef,
        output: str | Iterable[str | content_pb2.ToolOutputBlock | content_pb2.TextBlock] = "",
        state: inputs.ResultStateName | str | int = "success",
        metadata: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
    ) -> None:
        """Sends the result of an external call (see :func:`parkway.inputs.tool_result`). Raises
        ``InvalidArgument`` naming the field when the metadata fails the tool's schema."""
        await self.send_input(
            self._core.submit_result(call, output, state, metadata), timeout=timeout
        )

    async def answer(
        self, call: inputs.CallRef, answers: inputs.Answers, *, timeout: float | None = None
    ) -> None:
        """Answers an AskUser call: ``{question: label | [labels] | Other(text)}`` or a list of
        answer objects. Raises ``InvalidArgument`` naming the field (e.g.
        ``external_execution_result.execution_results[0].ask_user.answers[0].selected[0]`` for an
        unknown label)."""
        await self.send_input(self._core.answer(call, answers), timeout=timeout)

    async def submit_results(
        self,
        results: Iterable[content_pb2.ToolResultBlock],
        *,
        reply_id: str = "",
        timeout: float | None = None,
    ) -> None:
        """Sends several external results in one input (build them with
        :func:`parkway.inputs.tool_result` / :func:`parkway.inputs.ask_user_result`)."""
        await self.send_input(self._core.submit_results(results, reply_id), timeout=timeout)

    async def interrupt(self, reply_id: str = "", *, timeout: float | None = None) -> None:
        """Stops the running or parked reply (a no-op on an idle session); its REPLY_END
        (INTERRUPTED) follows as an event."""
        await self.send_input(self._core.interrupt(reply_id), timeout=timeout)

"""One ``Chat`` call over grpcio's blocking API, for the blocking :class:`parkway.Session`.

The requests go out from a queue that grpcio's own request thread drains (``Chat(iter(queue.get,
None))``); the responses are read with ``next()`` on the thread that needs them, as with the raw
stub, so an event costs no hand-off between threads of this client.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any

import grpc

from parkway.errors import DeadlineExceeded, ParkwayError, from_rpc_error
from parkway.session_core import SessionCore
from parkway.v1 import events_pb2

__all__ = ["ChatStream", "open_attached"]


class ChatStream:
    """A started ``Chat`` call: :meth:`write` queues a request, :meth:`read` takes the next
    response on the calling thread, :meth:`half_close` ends the requests (the server then ends the
    call) and :meth:`wait_ended` waits for the call's end, :meth:`close` cancels the call (both
    directions)."""

    def __init__(
        self, chat: Callable[..., Any], metadata: tuple[tuple[str, str], ...], wait_for_ready: bool
    ) -> None:
        self._outbox: queue.SimpleQueue[events_pb2.ClientEvent | None] = queue.SimpleQueue()
        self._responses: Any = chat(
            iter(self._outbox.get, None), metadata=metadata, wait_for_ready=wait_for_ready
        )

    def write(self, message: events_pb2.ClientEvent) -> None:
        """Queues a request; grpcio's request thread sends it (dropped once the call ended)."""
        self._outbox.put(message)

    def read(self) -> events_pb2.ServerEvent | None:
        """The next response; None when the server ended the call with OK. Raises the call's
        error as a :class:`parkway.ParkwayError`."""
        try:
            message: events_pb2.ServerEvent = next(self._responses)
        except StopIteration:
            return None
        except grpc.RpcError as err:
            raise from_rpc_error(err) from None
        return message

    def close(self) -> None:
        """Cancels the call (a no-op once it ended) and lets grpcio's request thread finish.
        A cancel resets the stream, which counts against the server's rate limit on resets (see
        :data:`parkway.session_core.CLOSE_GRACE_S`): a session done with its stream half-closes
        it first and cancels it only when it is still running after a grace period."""
        self._outbox.put(None)
        self._responses.cancel()

    def half_close(self) -> None:
        """Ends the requests: grpcio's request thread sends what is queued, then half-closes the
        call. The server ends a half-closed call (OK) once the session runs no reply."""
        self._outbox.put(None)

    def wait_ended(self, timeout: float) -> bool:
        """Waits up to ``timeout`` seconds for the call to end (with any status); True once it
        has. The call ends even while nobody reads its responses."""
        ended = threading.Event()
        self._responses.add_done_callback(lambda _: ended.set())
        return ended.wait(max(0.0, timeout))


def open_attached(
    chat: Callable[..., Any],
    metadata: tuple[tuple[str, str], ...],
    core: SessionCore,
    timeout: float,
    *,
    wait_for_ready: bool = False,
) -> ChatStream:
    """Starts a ``Chat`` call with the stub's ``Chat`` method, writes the attach request of
    ``core`` and waits up to ``timeout`` seconds for its acknowledgement; returns the attached
    stream, or raises (``DeadlineExceeded`` when the acknowledgement is late: the call is cancelled
    then). With ``wait_for_ready``, a channel that is (re)connecting is waited for instead of
    failing at once."""
    stream = ChatStream(chat, metadata, wait_for_ready)
    hello = core.hello()
    stream.write(hello)
    # A blocking read has no timeout of its own: a timer cancels the call when the time is up.
    guard = threading.Lock()
    state: list[str] = []  # its first entry: "late" (the timer cancelled the call) or "read"

    def settle(how: str) -> bool:
        with guard:
            if not state:
                state.append(how)
            return state[0] == "late"

    def expire() -> None:
        if settle("late"):
            stream.close()

    timer = threading.Timer(timeout, expire)
    timer.daemon = True
    timer.start()
    try:
        first = stream.read()
    except BaseException as err:
        timer.cancel()
        stream.close()
        if settle("read") and isinstance(err, ParkwayError):
            raise DeadlineExceeded(
                f"attach to {core.id} was not acknowledged within {timeout:g}s"
            ) from None
        raise
    timer.cancel()
    if settle("read"):  # the answer came as the timer cancelled the call
        raise DeadlineExceeded(f"attach to {core.id} was not acknowledged within {timeout:g}s")
    try:
        core.check_attached(hello, first)
    except BaseException:
        stream.close()
        raise
    return stream

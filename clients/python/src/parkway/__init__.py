"""Python client for Parkway, a gRPC server hosting tool-using LLM agents with people in the loop.

Two clients over the same generated stubs and the same logic:

- :class:`AsyncClient` / :class:`AsyncSession` for asyncio (``grpc.aio``);
- :class:`Client` / :class:`Session`, their blocking twins.

A session attached with ``attach()`` is one Chat stream: ``send(text)`` yields typed
:class:`Event` objects until the reply finishes or parks; ``confirm``, ``deny``, ``submit_result``,
``answer`` and ``interrupt`` answer what a parked reply awaits and raise :class:`ParkwayError` when
the server refuses; a stream broken by a server restart re-attaches by itself without losing or
repeating events. :mod:`parkway.inputs` builds batched answers; :mod:`parkway.v1` holds the
generated messages and stubs.
"""

from parkway import inputs, v1
from parkway._version import __version__
from parkway.client import DEFAULT_REPLY_TIMEOUT, DEFAULT_TIMEOUT, AsyncClient
from parkway.errors import (
    Aborted,
    AlreadyExists,
    Cancelled,
    DeadlineExceeded,
    FailedPrecondition,
    FieldViolation,
    Internal,
    InvalidArgument,
    NotFound,
    ParkwayError,
    PermissionDenied,
    PreconditionViolation,
    ResourceExhausted,
    Unauthenticated,
    Unavailable,
    Unimplemented,
)
from parkway.events import Event, EventKind
from parkway.inputs import Other
from parkway.keepalive import Keepalive
from parkway.session import AsyncSession, ReconnectPolicy
from parkway.sync import Client, Session

__all__ = [
    "DEFAULT_REPLY_TIMEOUT",
    "DEFAULT_TIMEOUT",
    "Aborted",
    "AlreadyExists",
    "AsyncClient",
    "AsyncSession",
    "Cancelled",
    "Client",
    "DeadlineExceeded",
    "Event",
    "EventKind",
    "FailedPrecondition",
    "FieldViolation",
    "Internal",
    "InvalidArgument",
    "Keepalive",
    "NotFound",
    "Other",
    "ParkwayError",
    "PermissionDenied",
    "PreconditionViolation",
    "ReconnectPolicy",
    "ResourceExhausted",
    "Session",
    "Unauthenticated",
    "Unavailable",
    "Unimplemented",
    "__version__",
    "inputs",
    "v1",
]

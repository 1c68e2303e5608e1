"""Errors raised by the Parkway client.

Every failure the server reports, whether a unary call's status or a refused input's `input_ack`, is
raised as a :class:`ParkwayError`: the gRPC status code, the message, and the ``google.rpc`` details
the server attached (``BadRequest`` field violations for invalid input, ``PreconditionFailure`` for an
input that does not fit the session's state, ``ErrorInfo`` for a stable machine-readable reason).

Each status code has its own subclass, so callers may write either ``except parkway.NotFound`` or
``except parkway.ParkwayError as e: if e.code == grpc.StatusCode.NOT_FOUND``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NamedTuple

import grpc
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

__all__ = [
    "Aborted",
    "AlreadyExists",
    "Cancelled",
    "DeadlineExceeded",
    "FailedPrecondition",
    "FieldViolation",
    "Internal",
    "InvalidArgument",
    "NotFound",
    "ParkwayError",
    "PermissionDenied",
    "PreconditionViolation",
    "ResourceExhausted",
    "Unauthenticated",
    "Unavailable",
    "Unimplemented",
    "error_class",
    "from_rpc_error",
    "from_rpc_status",
]


class FieldViolation(NamedTuple):
    """One invalid field: its path from the request's root (e.g.
    ``external_execution_result.execution_results[0].ask_user.answers[0].selected[0]``) and what
    is wrong with it."""

    field: str
    description: str


class PreconditionViolation(NamedTuple):
    """One failed precondition: its type (e.g. ``TOOL_CALL``), its subject (e.g. a tool call id) and
    a description that names the subject's current state."""

    type: str
    subject: str
    description: str


class ParkwayError(Exception):
    """A call or an input the server refused (or a client-side failure with a status code).

    Attributes:
        code: the gRPC status code.
        message: the server's message, for people.
        field_violations: ``(field, description)`` pairs from ``google.rpc.BadRequest``.
        precondition_violations: ``(type, subject, description)`` from ``google.rpc.PreconditionFailure``.
        reason: ``google.rpc.ErrorInfo.reason`` when the server sent one (a stable code), else ``""``.
        status: the ``google.rpc.Status`` the error was decoded from, when there was one.
    """

    #: The status code of errors built from this class without an explicit code.
    default_code: grpc.StatusCode = grpc.StatusCode.UNKNOWN

    def __init__(
        self,
        message: str,
        *,
        code: grpc.StatusCode | None = None,
        field_violations: Iterable[FieldViolation] = (),
        precondition_violations: Iterable[PreconditionViolation] = (),
        reason: str = "",
        status: status_pb2.Status | None = None,
    ) -> None:
        super().__init__(message)
        self.code: grpc.StatusCode = code if code is not None else self.default_code
        self.message = message
        self.field_violations: list[FieldViolation] = list(field_violations)
        self.precondition_violations: list[PreconditionViolation] = list(precondition_violations)
        self.reason = reason
        self.status = status

    @property
    def code_name(self) -> str:
        """The status code's name, e.g. ``"FAILED_PRECONDITION"``."""
        return str(self.code.name)

    @property
    def fields(self) -> list[str]:
        """Just the field paths of :attr:`field_violations`."""
        return [v.field for v in self.field_violations]

    def __str__(self) -> str:
        text = f"{self.code_name}: {self.message}"
        extra = [f"{v.field}: {v.description}" for v in self.field_violations]
        extra += [f"{v.subject}: {v.description}" for v in self.precondition_violations]
        if extra:
            text += " (" + "; ".join(extra) + ")"
        return text

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, code={self.code_name})"


class Cancelled(ParkwayError):
    """CANCELLED: the call was cancelled (usually by this client)."""

    default_code = grpc.StatusCode.CANCELLED


class InvalidArgument(ParkwayError):
    """INVALID_ARGUMENT: the input is malformed; :attr:`field_violations` names the fields."""

    default_code = grpc.StatusCode.INVALID_ARGUMENT


class DeadlineExceeded(ParkwayError, TimeoutError):
    """DEADLINE_EXCEEDED: the call's deadline (or a client-side wait) passed. Also a TimeoutError."""

    default_code = grpc.StatusCode.DEADLINE_EXCEEDED


class NotFound(ParkwayError):
    """NOT_FOUND: no such session, agent, rule or tool call (another tenant's ids answer this too)."""

    default_code = grpc.StatusCode.NOT_FOUND


class AlreadyExists(ParkwayError):
    """ALREADY_EXISTS."""

    default_code = grpc.StatusCode.ALREADY_EXISTS


class PermissionDenied(ParkwayError):
    """PERMISSION_DENIED: the principal may not do this."""

    default_code = grpc.StatusCode.PERMISSION_DENIED


class ResourceExhausted(ParkwayError):
    """RESOURCE_EXHAUSTED: e.g. a stream fell too far behind the session's events."""

    default_code = grpc.StatusCode.RESOURCE_EXHAUSTED


class FailedPrecondition(ParkwayError):
    """FAILED_PRECONDITION: the input does not fit the session's state (a user message while a reply
    is parked, a confirmation for a call that is not awaiting one); nothing changed.
    :attr:`precondition_violations` names the state."""

    default_code = grpc.StatusCode.FAILED_PRECONDITION


class Aborted(ParkwayError):
    """ABORTED: a concurrent change won; retrying may succeed."""

    default_code = grpc.StatusCode.ABORTED


class Unimplemented(ParkwayError):
    """UNIMPLEMENTED."""

    default_code = grpc.StatusCode.UNIMPLEMENTED


class Internal(ParkwayError):
    """INTERNAL: the server failed; it logged the details."""

    default_code = grpc.StatusCode.INTERNAL


class Unavailable(ParkwayError):
    """UNAVAILABLE: the server cannot be reached, is shutting down, or the stream broke.

    Raised by an input helper when the session could not re-attach before the input was
    acknowledged: the input may or may not have been applied."""

    default_code = grpc.StatusCode.UNAVAILABLE


class Unauthenticated(ParkwayError):
    """UNAUTHENTICATED: no or an unknown bearer token."""

    default_code = grpc.StatusCode.UNAUTHENTICATED


_BY_CODE: Mapping[grpc.StatusCode, type[ParkwayError]] = {
    cls.default_code: cls
    for cls in (
        Cancelled,
        InvalidArgument,
        DeadlineExceeded,
        NotFound,
        AlreadyExists,
        PermissionDenied,
        ResourceExhausted,
        FailedPrecondition,
        Aborted,
        Unimplemented,
        Internal,
        Unavailable,
        Unauthenticated,
    )
}
_BY_NUMBER: Mapping[int, grpc.StatusCode] = {int(c.value[0]): c for c in grpc.StatusCode}


def error_class(code: grpc.StatusCode) -> type[ParkwayError]:
    """The :class:`ParkwayError` subclass for a status code (``ParkwayError`` itself when none)."""
    return _BY_CODE.get(code, ParkwayError)


def from_rpc_status(status: status_pb2.Status) -> ParkwayError:
    """Builds the error from a ``google.rpc.Status`` (as carried by ``InputAck.status`` or
    ``grpc-status-details-bin``), decoding its BadRequest, PreconditionFailure and ErrorInfo details.
    Unknown detail types are kept in :attr:`ParkwayError.status` only."""
    code = _BY_NUMBER.get(status.code, grpc.StatusCode.UNKNOWN)
    fields: list[FieldViolation] = []
    preconditions: list[PreconditionViolation] = []
    reason = ""
    for detail in status.details:
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            fields += [FieldViolation(v.field, v.description) for v in bad.field_violations]
        elif detail.Is(error_details_pb2.PreconditionFailure.DESCRIPTOR):
            failure = error_details_pb2.PreconditionFailure()
            detail.Unpack(failure)
            preconditions += [
                PreconditionViolation(v.type, v.subject, v.description) for v in failure.violations
            ]
        elif detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            reason = info.reason
    return error_class(code)(
        status.message,
        code=code,
        field_violations=fields,
        precondition_violations=preconditions,
        reason=reason,
        status=status,
    )


def from_rpc_error(err: grpc.RpcError) -> ParkwayError:
    """Builds the error from a failed call: a ``grpc.RpcError`` of the blocking API or a
    ``grpc.aio.AioRpcError`` (both expose ``code()``, ``details()`` and ``trailing_metadata()``).
    Uses the rich status from ``grpc-status-details-bin`` (``grpc_status.rpc_status.from_call``)
    when present and consistent with the call's code, else the plain code and details."""
    code = _call_value(err, "code")
    details = _call_value(err, "details")
    code = code if isinstance(code, grpc.StatusCode) else grpc.StatusCode.UNKNOWN
    try:
        rich = rpc_status.from_call(err)  # type: ignore[arg-type]
    except (ValueError, AttributeError, TypeError):
        rich = None  # inconsistent or undecodable details: fall back to the plain status
    if rich is not None:
        return from_rpc_status(rich)
    return error_class(code)(str(details or code.name), code=code)


def _call_value(err: object, name: str) -> object:
    method = getattr(err, name, None)
    try:
        return method() if callable(method) else None
    except Exception:
        return None

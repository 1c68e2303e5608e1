"""The generated parkway.v1 modules import from the installed package and round-trip messages."""

from __future__ import annotations

import importlib
import importlib.metadata

from google.protobuf import struct_pb2, timestamp_pb2
from google.rpc import code_pb2, status_pb2

import parkway
from parkway.v1 import agent_service_pb2_grpc, content_pb2, events_pb2, permission_pb2_grpc


def test_every_generated_module_imports() -> None:
    assert parkway.v1.__all__
    for name in parkway.v1.__all__:
        importlib.import_module(f"parkway.v1.{name}")
    assert callable(agent_service_pb2_grpc.AgentServiceStub)
    assert callable(permission_pb2_grpc.PermissionServiceStub)


def test_version_matches_distribution() -> None:
    assert parkway.__version__ == importlib.metadata.version("parkway")


def test_client_event_round_trips() -> None:
    event = events_pb2.ClientEvent(
        session_id="sess-1",
        request_id="req-1",
        user_message=events_pb2.UserMessage(
            text="hello",
            content=[content_pb2.ContentBlock(text=content_pb2.TextBlock(id="b1", text="hello"))],
        ),
    )
    wire = event.SerializeToString()
    decoded = events_pb2.ClientEvent.FromString(wire)
    assert decoded == event
    assert decoded.WhichOneof("event") == "user_message"
    assert decoded.user_message.content[0].text.text == "hello"
    assert decoded.SerializeToString(deterministic=True) == event.SerializeToString(
        deterministic=True
    )


def test_server_event_round_trips() -> None:
    metadata = struct_pb2.Struct()
    metadata.update({"exit_code": 0, "stdout": "ok"})
    event = events_pb2.ServerEvent(
        id="ev-1",
        seq=7,
        session_id="sess-1",
        reply_id="reply-1",
        created_at=timestamp_pb2.Timestamp(seconds=1_700_000_000, nanos=5),
        tool_result_end=events_pb2.ToolResultEnd(
            tool_call_id="call-1",
            state=content_pb2.TOOL_RESULT_STATE_SUCCESS,
            metadata=metadata,
        ),
    )
    decoded = events_pb2.ServerEvent.FromString(event.SerializeToString())
    assert decoded == event
    assert decoded.WhichOneof("event") == "tool_result_end"
    assert decoded.tool_result_end.metadata["stdout"] == "ok"


def test_google_rpc_comes_from_googleapis_common_protos() -> None:
    """google.rpc is not generated here: the parkway.v1 modules link to the package's status.proto."""
    users = [
        importlib.import_module(f"parkway.v1.{name}")
        for name in parkway.v1.__all__
        if name.endswith("_pb2")
    ]
    deps = [
        dep
        for module in users
        for dep in module.DESCRIPTOR.dependencies
        if dep.name == "google/rpc/status.proto"
    ]
    assert deps, "no parkway.v1 proto imports google/rpc/status.proto"
    assert all(dep is status_pb2.DESCRIPTOR for dep in deps)
    assert status_pb2.Status(code=code_pb2.FAILED_PRECONDITION).code == code_pb2.FAILED_PRECONDITION

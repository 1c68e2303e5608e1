"""The server answers the standard gRPC health and reflection services (grpcurl-style tooling)."""

from __future__ import annotations

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)


@pytest.mark.parametrize("service", ["", "parkway.v1.AgentService"])
def test_health_check_serving(parkway_channel: grpc.Channel, service: str) -> None:
    stub = health_pb2_grpc.HealthStub(parkway_channel)
    response = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=10)
    assert response.status == health_pb2.HealthCheckResponse.SERVING


def test_reflection_lists_parkway_services(parkway_channel: grpc.Channel) -> None:
    services = set(ProtoReflectionDescriptorDatabase(parkway_channel).get_services())
    assert {"parkway.v1.AgentService", "parkway.v1.PermissionService"} <= services, services


def test_reflection_resolves_every_type(parkway_channel: grpc.Channel) -> None:
    """A reflection client can rebuild the services with all their imported types."""
    from google.protobuf.descriptor_pool import DescriptorPool

    pool = DescriptorPool(ProtoReflectionDescriptorDatabase(parkway_channel))
    agent = pool.FindServiceByName("parkway.v1.AgentService")
    assert {m.name for m in agent.methods} >= {"Chat", "Reply", "CreateSession", "ListAgents"}
    permission = pool.FindServiceByName("parkway.v1.PermissionService")
    assert {m.name for m in permission.methods} == {
        "ListRules",
        "AddRules",
        "RemoveRule",
        "SetMode",
        "Explain",
    }
    created_at = pool.FindMessageTypeByName("parkway.v1.ServerEvent").fields_by_name["created_at"]
    assert created_at.message_type is not None
    assert created_at.message_type.full_name == "google.protobuf.Timestamp"

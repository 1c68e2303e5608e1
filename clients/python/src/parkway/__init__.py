"""Python client for Parkway: generated parkway.v1 messages and gRPC stubs.

`parkway.v1` holds the protobuf messages (`parkway.v1.events_pb2`, ...) and the gRPC stubs
(`parkway.v1.agent_service_pb2_grpc.AgentServiceStub`, ...) generated from proto/parkway/v1.
"""

from parkway import v1

__version__ = "0.1.0"

__all__ = ["__version__", "v1"]

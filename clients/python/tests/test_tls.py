"""TLS and mTLS against real servers, with certificates generated for the test session by the
repository's test/helpers/certs-cli.ts (the generator the TypeScript and Go tests use too)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

import parkway
from parkway_harness import ParkwayServer, find_repo_root


@pytest.fixture(scope="module")
def cert_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Paths of the PEM files by role: ca, serverCert, serverKey, clientCert, clientKey, otherCa,
    otherClientCert, otherClientKey."""
    made = subprocess.run(
        [
            "node",
            "--import",
            "tsx",
            "test/helpers/certs-cli.ts",
            str(tmp_path_factory.mktemp("certs")),
        ],
        cwd=find_repo_root(),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    paths: dict[str, str] = json.loads(made.stdout.strip().splitlines()[-1])
    return paths


@pytest.fixture(scope="module")
def certs(cert_files: dict[str, str]) -> dict[str, bytes]:
    """The PEM contents of `cert_files`, by the same roles."""
    return {role: Path(path).read_bytes() for role, path in cert_files.items()}


def _serve(tmp: Path, tls: dict[str, Any]) -> Iterator[str]:
    """Runs the server (default agent and demo model) with `tls` as its config's tls section."""
    config = tmp / "parkway.json"
    config.write_text(json.dumps({"tls": tls}), encoding="utf-8")
    server = ParkwayServer(find_repo_root(), tmp / "data", config)
    try:
        address = server.start()
    except RuntimeError as err:
        pytest.fail(str(err), pytrace=False)
    try:
        yield address
    finally:
        server.stop()


@pytest.fixture(scope="module")
def tls_addr(tmp_path_factory: pytest.TempPathFactory, cert_files: dict[str, str]) -> Iterator[str]:
    tls = {"cert": cert_files["serverCert"], "key": cert_files["serverKey"]}
    yield from _serve(tmp_path_factory.mktemp("tls"), tls)


@pytest.fixture(scope="module")
def mtls_addr(
    tmp_path_factory: pytest.TempPathFactory, cert_files: dict[str, str]
) -> Iterator[str]:
    tls = {
        "cert": cert_files["serverCert"],
        "key": cert_files["serverKey"],
        "clientCa": cert_files["ca"],
        "requireClientCert": True,
    }
    yield from _serve(tmp_path_factory.mktemp("mtls"), tls)


def _client_kwargs(certs: dict[str, bytes], who: str) -> dict[str, Any]:
    """Client arguments: "plaintext", "ca" (trust the CA, no certificate), "client" (and present
    the CA-signed certificate), "other-ca" (trust another CA), "other-client" (present a
    certificate another CA signed)."""
    return {
        "plaintext": {},
        "ca": {"root_certificates": certs["ca"]},
        "client": {
            "root_certificates": certs["ca"],
            "certificate_chain": certs["clientCert"],
            "private_key": certs["clientKey"],
        },
        "other-ca": {"root_certificates": certs["otherCa"]},
        "other-client": {
            "root_certificates": certs["ca"],
            "certificate_chain": certs["otherClientCert"],
            "private_key": certs["otherClientKey"],
        },
    }[who]


def _health(address: str, credentials: grpc.ChannelCredentials) -> int:
    with grpc.secure_channel(address, credentials) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        response = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=10)
        return int(response.status)


def _text(response: Any) -> str:
    return "".join(block.text.text for block in response.message.content)


@pytest.mark.parametrize(("server", "who"), [("tls", "ca"), ("mtls", "client")])
async def test_async_client_converses(
    request: pytest.FixtureRequest, certs: dict[str, bytes], server: str, who: str
) -> None:
    address = request.getfixturevalue(f"{server}_addr")
    async with parkway.AsyncClient(address, timeout=20, **_client_kwargs(certs, who)) as client:
        session = await client.create_session("assistant")
        response = await client.reply(session.id, "hello over TLS?")
    assert "Parkway demo model" in _text(response)


@pytest.mark.parametrize(("server", "who"), [("tls", "ca"), ("mtls", "client")])
def test_blocking_client_converses(
    request: pytest.FixtureRequest, certs: dict[str, bytes], server: str, who: str
) -> None:
    address = request.getfixturevalue(f"{server}_addr")
    with parkway.Client(address, timeout=20, **_client_kwargs(certs, who)) as client:
        session = client.create_session("assistant")
        response = client.reply(session.id, "hello over TLS?")
    assert "Parkway demo model" in _text(response)


def test_health_serving_over_tls(tls_addr: str, mtls_addr: str, certs: dict[str, bytes]) -> None:
    serving = health_pb2.HealthCheckResponse.SERVING
    assert _health(tls_addr, grpc.ssl_channel_credentials(certs["ca"])) == serving
    mutual = grpc.ssl_channel_credentials(certs["ca"], certs["clientKey"], certs["clientCert"])
    assert _health(mtls_addr, mutual) == serving


def test_credentials_argument(tls_addr: str, certs: dict[str, bytes]) -> None:
    credentials = grpc.ssl_channel_credentials(certs["ca"])
    with parkway.Client(tls_addr, credentials=credentials, timeout=20) as client:
        assert [a.id for a in client.list_agents()] == ["assistant"]


@pytest.mark.parametrize(
    ("server", "who"),
    [
        ("tls", "plaintext"),
        ("tls", "other-ca"),
        ("mtls", "plaintext"),
        ("mtls", "ca"),  # no client certificate
        ("mtls", "other-client"),
    ],
)
async def test_refused_with_unavailable(
    request: pytest.FixtureRequest, certs: dict[str, bytes], server: str, who: str
) -> None:
    address = request.getfixturevalue(f"{server}_addr")
    async with parkway.AsyncClient(address, timeout=20, **_client_kwargs(certs, who)) as client:
        with pytest.raises(parkway.Unavailable):
            await client.list_agents()


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"credentials": grpc.ssl_channel_credentials(), "root_certificates": b"x"}, "credentials"),
        ({"certificate_chain": b"x"}, "private_key"),
        ({"private_key": b"x"}, "certificate_chain"),
    ],
)
def test_contradictory_tls_arguments(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ValueError, match=f"^{field}:"):
        parkway.AsyncClient("127.0.0.1:1", **kwargs)
    with pytest.raises(ValueError, match=f"^{field}:"):
        parkway.Client("127.0.0.1:1", **kwargs)

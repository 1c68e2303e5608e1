"""Channel credentials from the clients' arguments: ready-made, TLS from PEM bytes, or none."""

from __future__ import annotations

import grpc

__all__ = ["channel_credentials"]


def channel_credentials(
    credentials: grpc.ChannelCredentials | None,
    root_certificates: bytes | None,
    certificate_chain: bytes | None,
    private_key: bytes | None,
) -> grpc.ChannelCredentials | None:
    """The credentials a client's arguments ask for: ``credentials`` as given; TLS when any of
    ``root_certificates`` (PEM of the CA to trust; the system's roots when None),
    ``certificate_chain`` and ``private_key`` (a client certificate and its key, for mTLS) is set;
    else None, a plaintext channel.

    Raises:
        ValueError: naming the argument, when ``credentials`` is combined with the PEM arguments
            or only one of ``certificate_chain`` and ``private_key`` is given.
    """
    pems = (root_certificates, certificate_chain, private_key)
    if credentials is not None:
        if any(p is not None for p in pems):
            raise ValueError(
                "credentials: give either credentials or root_certificates / certificate_chain /"
                " private_key, not both"
            )
        return credentials
    if (certificate_chain is None) != (private_key is None):
        missing = "private_key" if private_key is None else "certificate_chain"
        raise ValueError(
            f"{missing}: a client certificate needs both certificate_chain and private_key"
        )
    if all(p is None for p in pems):
        return None
    return grpc.ssl_channel_credentials(
        root_certificates=root_certificates,
        private_key=private_key,
        certificate_chain=certificate_chain,
    )

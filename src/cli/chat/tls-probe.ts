import { isIP, Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";
import type { TlsOptions } from "../../client/index.js";

/** How long each probe waits for the server before it gives up on explaining. */
const PROBE_MS = 5000;

function hostPort(address: string): { host: string; port: number } {
  const colon = address.lastIndexOf(":");
  return {
    host: address.slice(0, colon).replace(/^\[(.*)\]$/, "$1"),
    port: Number(address.slice(colon + 1)),
  };
}

/** True when a TCP connection to the address is accepted. */
function reachable(address: string): Promise<boolean> {
  const { host, port } = hostPort(address);
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(PROBE_MS, () => done(false));
    socket.once("error", () => done(false));
    socket.connect(port, host, () => done(true));
  });
}

/**
 * A TLS handshake with the address as gRPC makes it (ALPN h2, the given CA and client certificate),
 * then the HTTP/2 preface, so that a server that wants a client certificate says so (TLS 1.3 sends
 * that alert after the client's side of the handshake). Resolves with the error, or undefined.
 */
function handshake(address: string, tls: TlsOptions | undefined): Promise<Error | undefined> {
  const { host, port } = hostPort(address);
  return new Promise((resolve) => {
    const socket = tlsConnect({
      host,
      port,
      ALPNProtocols: ["h2"],
      ...(isIP(host) === 0 ? { servername: host } : {}),
      ...(tls?.ca ? { ca: tls.ca } : {}),
      ...(tls?.cert ? { cert: tls.cert } : {}),
      ...(tls?.key ? { key: tls.key } : {}),
      // Without --tls-ca, only whether the server speaks TLS is asked.
      rejectUnauthorized: tls !== undefined,
    });
    let settled = false;
    const done = (err: Error | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(err);
    };
    const timer = setTimeout(() => done(undefined), PROBE_MS);
    socket.once("error", (err: Error) => done(err));
    socket.once("secureConnect", () => {
      socket.write(
        "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\u0000\u0000\u0000\u0004\u0000\u0000\u0000\u0000\u0000",
      );
      socket.once("data", () => done(undefined));
      socket.once("close", () => done(undefined));
    });
  });
}

/** The flags that turned TLS on, as the user wrote them. */
const CA_FLAG = "--tls-ca";

/**
 * Explains why a server that answered UNAVAILABLE could not be used, when it was reached: TLS on
 * one side only, a certificate the CA did not sign, a client certificate the server wants.
 * Resolves with one line, or undefined when the address cannot be reached at all (no server).
 * `grpcMessage` is what the failed call said, for a failure none of these explains.
 */
export async function explainUnavailable(
  address: string,
  tls: TlsOptions | undefined,
  grpcMessage: string,
): Promise<string | undefined> {
  if (!(await reachable(address))) return undefined;
  const err = await handshake(address, tls);
  const code = err && "code" in err && typeof err.code === "string" ? err.code : "";
  const detail = err ? ` (${code || err.message})` : "";
  const wantsClientCert =
    /CERTIFICATE_REQUIRED/.test(code) || /certificate required/i.test(err?.message ?? "");
  if (!tls) {
    // A handshake, or an alert the server sent in one, means it speaks TLS.
    if (err && !wantsClientCert && !/ALERT/.test(code)) {
      return `${address} accepts connections, but the chat's calls fail there: ${grpcMessage}`;
    }
    return `the server at ${address} wants TLS and the chat spoke plaintext: pass ${CA_FLAG} FILE, the CA that signed its certificate${wantsClientCert ? ", and --tls-cert FILE and --tls-key FILE for its mutual TLS" : ""}`;
  }
  if (!err) {
    return `the TLS handshake with ${address} succeeded, but the chat's calls fail there: ${grpcMessage}`;
  }
  if (wantsClientCert) {
    return `the server at ${address} wants a client certificate (mutual TLS): pass --tls-cert FILE and --tls-key FILE${detail}`;
  }
  if (/UNKNOWN_CA|BAD_CERTIFICATE|DECRYPT_ERROR/.test(code)) {
    return `the server at ${address} refused the client certificate of --tls-cert: it is not signed by a CA the server trusts${detail}`;
  }
  if (
    /CERT|SIGNATURE|ALTNAME|ISSUER|VERIFY/.test(code) ||
    /certificate|altnames/i.test(err.message)
  ) {
    return `the TLS handshake with ${address} failed: its certificate is not one ${CA_FLAG} vouches for: ${err.message}${detail}`;
  }
  if (/WRONG_VERSION_NUMBER|ECONNRESET|packet length/i.test(`${code} ${err.message}`)) {
    return `the TLS handshake with ${address} failed: the server does not speak TLS there; leave out --tls-* for a plaintext server${detail}`;
  }
  return `the TLS handshake with ${address} failed: ${err.message}${detail}`;
}

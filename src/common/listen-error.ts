/** The address cannot be listened on; `message` is one line naming it and the cause. */
export class ListenError extends Error {
  override readonly name = "ListenError";
}

/** The one-line error of an address that cannot be bound, naming its cause. */
export function listenError(address: string, err: Error): ListenError {
  const code: unknown = (err as NodeJS.ErrnoException).code;
  const cause = typeof code === "string" ? code : /\b(E[A-Z]+)\b/.exec(err.message)?.[1];
  const why =
    cause === "EADDRINUSE"
      ? "address in use (EADDRINUSE)"
      : cause === "EADDRNOTAVAIL"
        ? "address not available on this machine (EADDRNOTAVAIL)"
        : cause === "EACCES"
          ? "permission denied (EACCES)"
          : err.message;
  return new ListenError(`cannot listen on ${address}: ${why}`);
}

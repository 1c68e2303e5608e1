/** A message grpc-js's writable call queued, as Node's `Writable` hands it to `_writev`. */
interface Queued {
  chunk: unknown;
}

/** What a grpc-js call stream keeps: the call that frames and sends each message. */
interface CallStream {
  call?: { sendMessage?: (message: unknown, sent: () => void) => void };
  _writev?: ((queued: Queued[], callback: (error?: Error | null) => void) => void) | null;
}

/**
 * Lets a grpc-js call send the messages queued behind the one being written all at once.
 *
 * grpc-js's call stream is a `Writable` without `_writev`: each message waits until the HTTP/2
 * write of the one before it has completed, a turn of the event loop per message. A park's batch
 * (the model's tool call events, then REQUIRE_*) thus left one event per turn, with whatever else
 * the server had to do in between. With `_writev`, `Writable` hands every queued message over in one
 * call; each is still serialized, checked and framed by grpc-js's own `sendMessage`, in order, and
 * HTTP/2 joins the frames. The queue's callback runs once every message of it is written, so flow
 * control (`write` returning false, `drain`) is unchanged. A call without the expected shape (another
 * grpc-js) is left as it is.
 */
export function sendQueuedTogether(stream: object): void {
  const call = stream as CallStream;
  const inner = call.call;
  if (typeof inner?.sendMessage !== "function" || typeof call._writev === "function") return;
  const send = inner.sendMessage.bind(inner);
  call._writev = (queued, callback) => {
    let left = queued.length;
    const sent = () => {
      left -= 1;
      if (left === 0) callback();
    };
    for (const { chunk } of queued) send(chunk, sent);
  };
}

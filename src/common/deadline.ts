/**
 * A signal that aborts when `signal` does, or with a "TimeoutError" after `ms`. Unlike
 * `AbortSignal.any([signal, AbortSignal.timeout(ms)])` its timer is a plain one, held until
 * `clear()`: on Node 20 a timeout signal that nothing else refers to can be collected before it
 * fires, and the request it bounds then waits forever. Call `clear()` once the work is done.
 */
export function deadline(
  signal: AbortSignal,
  ms: number,
): { signal: AbortSignal; timedOut: () => boolean; clear: () => void } {
  const controller = new AbortController();
  let timedOut = false;
  const onAbort = () => controller.abort(signal.reason);
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new DOMException(`timed out after ${ms} ms`, "TimeoutError"));
  }, ms);
  if (signal.aborted) onAbort();
  else signal.addEventListener("abort", onAbort, { once: true });
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    clear: () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
    },
  };
}

/**
 * Waits for `work` at most `ms`. The timer is ref'd and cleared once either settles: unref'd, a
 * wait that was the process's last handle (the end of a shutdown) would leave its await unsettled,
 * and Node would exit with code 13 instead of finishing the shutdown.
 */
export async function boundedWait(work: Promise<unknown> | undefined, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([work, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

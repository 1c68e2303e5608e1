/** The sum of the samples of `metric` on a `/metrics` page whose line contains `label`. */
export async function sample(url: string, metric: string, label = ""): Promise<number> {
  const text = await (await fetch(url)).text();
  let sum = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith(`${metric}{`) && line.includes(label)) {
      sum += Number(line.slice(line.lastIndexOf(" ") + 1));
    }
  }
  return sum;
}

/**
 * The store reads a server has made so far: single records, several at once and ranges, or only
 * the `ops` given (a scrape of `/metrics` itself scans the store for its parked-replies gauge).
 */
export async function storeReads(
  url: string,
  ops: readonly string[] = ["get", "get_many", "scan"],
): Promise<number> {
  const count = "parkway_store_operation_duration_seconds_count";
  const each = await Promise.all(ops.map((op) => sample(url, count, `operation="${op}"`)));
  return each.reduce((a, b) => a + b, 0);
}

/**
 * Whether every stored record is validated against its schema when written, including the kinds the
 * server writes at a high rate from values its own types already guarantee (those are otherwise
 * validated on read only). On when `PARKWAY_CHECK_WRITES` is `1`; the test suite turns it on, so a
 * record the server builds wrongly fails the test that wrote it rather than a later read.
 */
export function checkEveryWriteFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.PARKWAY_CHECK_WRITES === "1";
}

// Module hooks (node:module `register`) that append the URL of every ES module Node loads to the
// file named by PARKWAY_MODULE_LOG.
import { appendFileSync } from "node:fs";
import process from "node:process";

const file = process.env.PARKWAY_MODULE_LOG;

export async function load(url, context, next) {
  if (file) appendFileSync(file, `${url}\n`);
  return next(url, context);
}

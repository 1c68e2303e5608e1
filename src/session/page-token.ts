import { invalidArgument } from "../common/errors.js";

/**
 * Opaque page tokens of a listing RPC: `version:<id of the page's last entry>` in base64url. A
 * token that does not decode to this version and an id of `idPattern` is refused with
 * INVALID_ARGUMENT naming `page_token` and the RPC (`rpc`).
 */
export function pageTokens(version: string, idPattern: RegExp, rpc: string) {
  return {
    encode: (id: string): string => Buffer.from(`${version}:${id}`, "utf8").toString("base64url"),
    decode: (token: string): string => {
      const text = /^[A-Za-z0-9_-]+$/.test(token) ? Buffer.from(token, "base64url").toString() : "";
      const [given, id] = text.split(":");
      if (given !== version || id === undefined || !idPattern.test(id)) {
        throw invalidArgument([
          { field: "page_token", description: `is not a token returned by ${rpc}` },
        ]);
      }
      return id;
    },
  };
}

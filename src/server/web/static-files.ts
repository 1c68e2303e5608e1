import { createReadStream } from "node:fs";
import { realpath, stat } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { NodeHandler, NodeResponse } from "./node-handler.js";

/**
 * Where the web console is built: `dist/console/` of the package (the same folder whether this runs
 * from src/ or from dist/, both three levels down).
 */
export const DEFAULT_CONSOLE_DIR = fileURLToPath(
  new URL("../../../dist/console/", import.meta.url),
);

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json",
  ".map": "application/json",
  ".txt": "text/plain; charset=utf-8",
  ".woff2": "font/woff2",
};

function answer(
  res: NodeResponse,
  code: number,
  text: string,
  headers: Record<string, string> = {},
) {
  res.writeHead(code, { "content-type": "text/plain; charset=utf-8", ...headers });
  res.end(`${text}\n`);
}

/** The file under `root` that `urlPath` names, or undefined when it names none or leaves `root`. */
async function resolveFile(root: string, urlPath: string): Promise<string | undefined> {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return undefined;
  }
  if (decoded.includes("\0") || decoded.includes("\\")) return undefined;
  const relative = decoded.endsWith("/") ? `${decoded}index.html` : decoded;
  const candidate = path.resolve(root, `.${path.posix.normalize(relative)}`);
  if (!candidate.startsWith(root + path.sep)) return undefined;
  try {
    // A symbolic link inside the folder must not lead out of it either.
    const real = await realpath(candidate);
    if (!real.startsWith((await realpath(root)) + path.sep)) return undefined;
    return (await stat(real)).isFile() ? real : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Serves the files of `dir` for GET and HEAD (`/` is `index.html`); paths that leave `dir`, and
 * missing files, answer 404; other methods 405. HTML is sent with `Cache-Control: no-cache`, so a
 * new console is picked up at once. When `dir` does not exist every path answers 404 saying so.
 */
export function staticFiles(dir: string): NodeHandler {
  const root = path.resolve(dir);
  return (req, res) => {
    void (async () => {
      if (req.method !== "GET" && req.method !== "HEAD") {
        answer(res, 405, "method not allowed", { allow: "GET, HEAD" });
        return;
      }
      const urlPath = (req.url ?? "/").split(/[?#]/)[0] ?? "/";
      const file = await resolveFile(root, urlPath);
      if (!file) {
        const built = await stat(root).then(
          (s) => s.isDirectory(),
          () => false,
        );
        answer(res, 404, built ? "not found" : "not found: the web console is not built");
        return;
      }
      const ext = path.extname(file).toLowerCase();
      res.writeHead(200, {
        "content-type": TYPES[ext] ?? "application/octet-stream",
        "x-content-type-options": "nosniff",
        ...(ext === ".html" ? { "cache-control": "no-cache" } : {}),
      });
      if (req.method === "HEAD") {
        res.end();
        return;
      }
      const stream = createReadStream(file);
      stream.on("error", () => res.destroy());
      stream.pipe(res);
    })().catch(() => res.destroy());
  };
}

import {
  lstatSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  statSync,
} from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { ProbeRefused, readGitIndex } from "../permissions/index.js";

/** The largest file `readSmallFileOf` reads: a repository's settings are a few hundred bytes. */
const MAX_SMALL_FILE = 64 * 1024;

/**
 * The largest git index `gitlinksOf` reads: about 150,000 files' entries. Reading it holds the
 * event loop (for milliseconds); a larger one is not judged.
 */
const MAX_GIT_INDEX = 16 * 1024 * 1024;

/** How many dangling links one path may pass through before it is taken as it is (as ELOOP). */
const MAX_LINKS = 40;

/**
 * Where an absolute path really leads: every symbolic link resolved, and `..` taken as the system
 * takes it (the parent of where the path so far leads); for a path that does not exist yet, its
 * nearest existing ancestor's real path joined with the missing segments, where a missing segment
 * that is itself a link (a dangling one: `touch dl` creates its target) is followed too. A path
 * that cannot be resolved (a loop, no permission) is returned as it is.
 */
export function realPathOf(path: string, links = 0): string {
  const missing: string[] = [];
  let current = path;
  for (;;) {
    try {
      return join(realpathSync.native(current), ...missing);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "ENOTDIR") return path;
    }
    const target = linkTarget(current);
    if (target !== undefined) {
      if (links >= MAX_LINKS) return path;
      return realPathOf(join(resolve(dirname(current), target), ...missing), links + 1);
    }
    const parent = dirname(current);
    if (parent === current) return path;
    missing.unshift(basename(current));
    current = parent;
  }
}

/** The target of the link at `path`, or undefined when there is no link there. */
function linkTarget(path: string): string | undefined {
  try {
    return lstatSync(path).isSymbolicLink() ? readlinkSync(path) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The names in the directory at `path` (links followed), or undefined when it cannot be listed.
 * A name that is not UTF-8 cannot be written back as a path the check could follow: it refuses.
 */
export function listDirectoryOf(path: string): readonly string[] | undefined {
  let raw: Buffer[];
  try {
    raw = readdirSync(path, { encoding: "buffer" });
  } catch {
    return undefined;
  }
  return raw.map((name) => {
    const text = name.toString("utf8");
    if (!Buffer.from(text, "utf8").equals(name)) {
      throw new ProbeRefused(`a name in ${path} is not UTF-8, so where it leads is not known`);
    }
    return text;
  });
}

/** Whether the file at `path` (links followed) is a regular file with more than one hard link. */
export function hardLinkedOf(path: string): boolean {
  try {
    const stat = statSync(path);
    return stat.isFile() && stat.nlink > 1;
  } catch {
    return false;
  }
}

/**
 * The text of the file at `path` (links followed), or undefined when nothing is there. One that is
 * there but is not a readable file of at most 64 KiB cannot be judged: it refuses.
 */
export function readSmallFileOf(path: string): string | undefined {
  return readBytes(path, MAX_SMALL_FILE)?.toString("utf8");
}

/** The bytes of the file at `path`, undefined when there is none; refuses past `max` bytes. */
function readBytes(path: string, max: number): Buffer | undefined {
  try {
    const stat = statSync(path);
    if (!stat.isFile()) throw new ProbeRefused(`${path} is not a file`);
    if (stat.size > max) {
      throw new ProbeRefused(`${path} is larger than the check reads (${max} bytes)`);
    }
    return readFileSync(path);
  } catch (err) {
    if (err instanceof ProbeRefused) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw new ProbeRefused(`${path} cannot be read (${code ?? String(err)})`);
  }
}

/**
 * The paths of the submodules (gitlinks) in the git index at `path`, with the shared index a split
 * index names (`sharedindex.<id>` beside it); undefined when there is no index. One that cannot be
 * read as an index, or is past 16 MiB, refuses.
 */
export function gitlinksOf(path: string, idBytes: 20 | 32): readonly string[] | undefined {
  const read = (file: string) => {
    const bytes = readBytes(file, MAX_GIT_INDEX);
    if (bytes === undefined) return undefined;
    const index = readGitIndex(bytes, idBytes);
    if (!index.ok)
      throw new ProbeRefused(`${file} cannot be read as git's index (${index.reason})`);
    return index;
  };
  const index = read(path);
  if (index?.sharedIndex === undefined) return index?.gitlinks;
  const shared = read(join(dirname(path), `sharedindex.${index.sharedIndex}`));
  return [...index.gitlinks, ...(shared?.gitlinks ?? [])];
}

/** The probes of the file system the permission check makes, as the server makes them. */
export const diskProbes = {
  realPath: realPathOf,
  listDirectory: listDirectoryOf,
  readSmallFile: readSmallFileOf,
  hardLinked: hardLinkedOf,
  gitlinks: gitlinksOf,
};

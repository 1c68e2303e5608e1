import type { PathContext } from "./types.js";

/**
 * A bound on the file system probes one decision makes. The check runs on the server's request
 * path with synchronous probes (a link resolved, a directory listed, a small file read); a command
 * line built to make it work (wildcards over large directories, thousands of paths, many
 * directories a `cd` may leave it in) is not judged past the bound, and asks.
 */
export const MAX_PROBES = 5_000;

/** Thrown by a probe when what it found cannot be judged: the call then asks. */
export class ProbeRefused extends Error {}

/** Thrown by a probe of a context from `withProbeBudget` once its budget is spent. */
export class ProbeBudgetSpent extends ProbeRefused {
  constructor() {
    super(`the command names more paths than the check follows (${MAX_PROBES} probes)`);
  }
}

/**
 * `context` with probes that spend one budget: a path resolved costs 1, a listing 1 and 1 per 64
 * names, a file read 1 and 1 per 4 KiB, a link count 1, an index's submodules 1 and 1 per 64. Each
 * answer is kept for the rest of the decision (a line's commands, judged from each directory they
 * may run in, ask for the same paths again); asked again, it costs 1 all the same, so the budget
 * bounds the paths a decision judges, not only the probes it makes.
 */
export function withProbeBudget(context: PathContext, budget = MAX_PROBES): PathContext {
  let left = budget;
  const spend = (cost: number): void => {
    left -= cost;
    if (left < 0) throw new ProbeBudgetSpent();
  };
  const { realPath, listDirectory, readSmallFile, hardLinked, gitlinks } = context;
  const real = new Map<string, string>();
  const listed = new Map<string, readonly string[] | undefined>();
  const read = new Map<string, string | undefined>();
  const links = new Map<string, boolean>();
  const indexes = new Map<string, readonly string[] | undefined>();
  return {
    ...context,
    ...(realPath === undefined
      ? {}
      : {
          realPath: (path: string) => {
            spend(1);
            let found = real.get(path);
            if (found === undefined) {
              found = realPath(path);
              real.set(path, found);
            }
            return found;
          },
        }),
    ...(listDirectory === undefined
      ? {}
      : {
          listDirectory: (path: string) => {
            spend(1);
            if (listed.has(path)) return listed.get(path);
            const names = listDirectory(path);
            spend(Math.ceil((names?.length ?? 0) / 64));
            listed.set(path, names);
            return names;
          },
        }),
    ...(readSmallFile === undefined
      ? {}
      : {
          readSmallFile: (path: string) => {
            spend(1);
            if (read.has(path)) return read.get(path);
            const text = readSmallFile(path);
            spend(Math.ceil((text?.length ?? 0) / 4096));
            read.set(path, text);
            return text;
          },
        }),
    ...(hardLinked === undefined
      ? {}
      : {
          hardLinked: (path: string) => {
            spend(1);
            let linked = links.get(path);
            if (linked === undefined) {
              linked = hardLinked(path);
              links.set(path, linked);
            }
            return linked;
          },
        }),
    ...(gitlinks === undefined
      ? {}
      : {
          gitlinks: (path: string, idBytes: 20 | 32) => {
            spend(1);
            if (indexes.has(path)) return indexes.get(path);
            const paths = gitlinks(path, idBytes);
            spend(Math.ceil((paths?.length ?? 0) / 64));
            indexes.set(path, paths);
            return paths;
          },
        }),
  };
}

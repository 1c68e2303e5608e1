import type { ShellCommand } from "./parse-shell.js";

/**
 * Where each command of a Bash line may run. Bash runs the pipeline after `&&` only when the one
 * before it succeeded, after `||` only when it failed, after `;`, `&` or a newline always; a `cd`
 * that fails leaves the directory where it was. The walk keeps every (directory, directory stack,
 * exit status) the line may have reached, so each command is judged from every directory it may
 * run in: in `cd sub && cat x` cat reads sub/x, in `cd sub; cat x` it reads sub/x or ./x, and in
 * `cd gone; cd ..; cat x` it may read the parent's x. A pipeline's commands and a command run in
 * the background run in subshells, and a `cd` run by another program (`env cd`) in its own process:
 * the directories they change to are taken as possible, not certain. Past `MAX_STATES` states the
 * directory is unknown, so later relative paths are too.
 */

/** How a command moves the shell's directory, from the directory it ran in. */
export type Move =
  /** To `to`. */
  | { kind: "cd"; to: string }
  /** To `to`, with the directory it left pushed onto the stack. */
  | { kind: "pushd"; to: string }
  /** Back to the directory on top of the stack, which it pops. */
  | { kind: "popd" }
  /** Somewhere the walk cannot follow, the stack with it (`cd -`, `pushd +1`, `popd -n`). */
  | { kind: "lost" };

/** What running one command from one directory gave. */
export interface Ran<T> {
  result: T;
  move?: Move;
  /** Whether the move happens in the shell itself (not under `env`, `nice`, `timeout`, …). */
  inShell?: boolean;
}

interface State {
  cwd: string | undefined;
  /** The directories pushed, oldest first; undefined when unknown. */
  stack: readonly (string | undefined)[] | undefined;
  ok: boolean;
}

const MAX_STATES = 16;
const PIPES = new Set(["|", "|&"]);

/**
 * Runs `run` for each command from each directory it may run in, starting in `start`; returns, per
 * command, the results from each of those directories (at least one).
 */
export function walkDirectories<T>(
  commands: readonly ShellCommand[],
  start: string | undefined,
  run: (command: ShellCommand, cwd: string | undefined) => Ran<T>,
): T[][] {
  let states: State[] = [{ cwd: start, stack: [], ok: true }];
  let connector = ";";
  const results: T[][] = [];
  for (let first = 0; first < commands.length;) {
    let last = first;
    while (last < commands.length - 1 && PIPES.has(commands[last]?.end ?? "")) last += 1;
    const reached = states.filter((state) =>
      connector === "&&" ? state.ok : connector === "||" ? !state.ok : true,
    );
    const running = reached.length > 0 ? reached : states;
    const next = states.filter((state) => !running.includes(state));
    const cwds = [...new Set(running.map((state) => state.cwd))];
    const alone = first === last && commands[last]?.end !== "&";
    for (let k = first; k <= last; k += 1) {
      const command = commands[k] as ShellCommand;
      const ran = new Map(cwds.map((cwd) => [cwd, run(command, cwd)]));
      results.push([...ran.values()].map((outcome) => outcome.result));
      for (const state of running) {
        const { move, inShell } = ran.get(state.cwd) as Ran<T>;
        if (alone && move !== undefined && inShell === true) {
          const succeeded = command.negated !== true;
          next.push({ ...moved(state, move), ok: succeeded }, { ...state, ok: !succeeded });
        } else {
          next.push({ ...state, ok: true }, { ...state, ok: false });
          if (move !== undefined) {
            const there = moved(state, move);
            next.push({ ...there, ok: true }, { ...there, ok: false });
          }
        }
      }
    }
    states = distinct(next);
    if (states.length > MAX_STATES) {
      states = [
        { cwd: undefined, stack: undefined, ok: true },
        { cwd: undefined, stack: undefined, ok: false },
      ];
    }
    connector = commands[last]?.end ?? ";";
    first = last + 1;
  }
  return results;
}

/** Where `move` leads from `state` (its exit status unchanged). */
function moved(state: State, move: Move): State {
  const { cwd, stack, ok } = state;
  switch (move.kind) {
    case "cd":
      return { cwd: move.to, stack, ok };
    case "pushd":
      return { cwd: move.to, stack: stack === undefined ? undefined : [...stack, cwd], ok };
    case "popd":
      return stack === undefined || stack.length === 0
        ? { cwd: undefined, stack: undefined, ok }
        : { cwd: stack.at(-1), stack: stack.slice(0, -1), ok };
    default:
      return { cwd: undefined, stack: undefined, ok };
  }
}

function distinct(states: readonly State[]): State[] {
  const byKey = new Map<string, State>();
  for (const state of states) {
    // Directories are absolute paths: "?" (an unknown one) and "*" (an unknown stack) are not.
    const stack = state.stack?.map((dir) => dir ?? "?").join("\0") ?? "*";
    byKey.set(`${state.ok ? 1 : 0}${state.cwd ?? "?"}\0${stack}`, state);
  }
  return [...byKey.values()];
}

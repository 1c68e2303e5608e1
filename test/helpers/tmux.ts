import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("../..", import.meta.url));

/** True when tmux is installed; the terminal tests skip without it. */
export const HAS_TMUX = spawnSync("tmux", ["-V"]).status === 0;

/** A tmux server of its own with one pane running a command; the screen is read with capture-pane. */
export class Tmux {
  private readonly socket = path.join(
    tmpdir(),
    `parkway-e2e-${process.pid}-${Math.random().toString(36).slice(2, 8)}.tmux`,
  );

  private tmux(...args: string[]): string {
    const res = spawnSync("tmux", ["-S", this.socket, "-f", "/dev/null", ...args], {
      encoding: "utf8",
    });
    if (res.status !== 0) throw new Error(`tmux ${args[0]} failed: ${res.stderr}`);
    return res.stdout;
  }

  /** Runs `command` (a shell line) in a 110×45 pane; "[exited N]" is printed when it ends. */
  start(command: string): void {
    this.tmux(
      "new-session",
      "-d",
      "-s",
      "chat",
      "-x",
      "110",
      "-y",
      "45",
      "-c",
      REPO,
      `${command}; echo "[exited $?]"; sleep 3600`,
    );
  }

  /** Types text literally. */
  type(text: string): void {
    this.tmux("send-keys", "-t", "chat", "-l", text);
  }

  /** Presses keys by tmux name: Enter, Escape, C-c, C-u, Down… */
  press(...keys: string[]): void {
    this.tmux("send-keys", "-t", "chat", ...keys);
  }

  /** The whole transcript: scrollback and the visible screen, with escape sequences if `escapes`. */
  screen(escapes = false): string {
    return this.tmux(
      "capture-pane",
      "-p",
      "-J",
      ...(escapes ? ["-e"] : []),
      "-S",
      "-",
      "-t",
      "chat",
    );
  }

  /** How often `text` occurs in the transcript. */
  count(text: string): number {
    return this.screen().split(text).length - 1;
  }

  /** Waits until `text` occurs at least `times` times; fails with the screen after `timeoutMs`. */
  async waitFor(text: string, times = 1, timeoutMs = 20_000): Promise<string> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const screen = this.screen();
      if (screen.split(text).length - 1 >= times) return screen;
      if (Date.now() > until) {
        throw new Error(`timed out waiting for ${JSON.stringify(text)} ×${times}:\n${screen}`);
      }
      await sleep(100);
    }
  }

  /** Waits until the chat's input prompt is the last line: the reply settled, the chat is idle. */
  async waitForPrompt(timeoutMs = 20_000): Promise<string> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const screen = this.screen();
      const lines = screen.split("\n").filter((l) => l.trim() !== "");
      if (lines.at(-1)?.trim() === "❯") return screen;
      if (Date.now() > until) throw new Error(`timed out waiting for the prompt:\n${screen}`);
      await sleep(100);
    }
  }

  /** Ends the tmux server and everything running in it. */
  kill(): void {
    spawnSync("tmux", ["-S", this.socket, "kill-server"]);
    rmSync(this.socket, { force: true });
  }
}

import { link, readFile, stat, unlink, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { editTool, grepTool, readTool, writeTool } from "../../../src/tools/index.js";
import { sandbox, toolContext } from "./tool-context.js";

let box: Awaited<ReturnType<typeof sandbox>>;
/** A file outside the working directory. */
let secret: string;
/** A hard link to `secret` inside the working directory. */
let linked: string;
beforeEach(async () => {
  box = await sandbox();
  secret = path.join(box.outside, "secret.txt");
  linked = path.join(box.work, "linked.txt");
  await writeFile(secret, "TOP SECRET\n");
  await utimes(secret, 1_700_000_000, 1_700_000_000);
  await link(secret, linked);
});
afterEach(async () => {
  await box.cleanup();
});

const ctx = () => toolContext([box.work]);

const refusal = (file: string, tool: string) =>
  `${file} has 2 hard links; a hard-linked file may also be reachable from outside the working directories, so ${tool}.`;

const GREP_NOTE =
  "(skipped 1 file with more than one hard link: a hard-linked file may also be reachable from outside the working directories, so Grep does not search hard-linked files)";

/** Checks that the file outside still has its content and modification time. */
async function expectSecretUnchanged(): Promise<void> {
  expect(await readFile(secret, "utf8")).toBe("TOP SECRET\n");
  expect((await stat(secret)).mtimeMs).toBe(1_700_000_000_000);
}

describe("the file tools and hard-linked files", () => {
  it("Read refuses a file with more than one hard link", async () => {
    const result = await readTool.run({ file_path: linked }, ctx());
    expect(result).toEqual({ state: "error", output: refusal(linked, "Read does not open it") });
  });

  it("Write refuses it without truncating or touching the file outside", async () => {
    const result = await writeTool.run({ file_path: linked, content: "overwritten" }, ctx());
    expect(result).toEqual({
      state: "error",
      output: refusal(linked, "Write does not write to it"),
    });
    await expectSecretUnchanged();
  });

  it("Edit refuses it, leaving the file outside unchanged", async () => {
    const result = await editTool.run(
      editTool.inputSchema.parse({ file_path: linked, old_string: "TOP", new_string: "NO" }),
      ctx(),
    );
    expect(result).toEqual({ state: "error", output: refusal(linked, "Edit does not edit it") });
    await expectSecretUnchanged();
  });

  it("Grep refuses it when named, and skips it in a directory with a note", async () => {
    const named = await grepTool.run(
      grepTool.inputSchema.parse({ pattern: "SECRET", path: linked }),
      ctx(),
    );
    expect(named).toEqual({ state: "error", output: refusal(linked, "Grep does not search it") });

    const plain = path.join(box.work, "plain.txt");
    await writeFile(plain, "not SECRET\n");
    const searched = await grepTool.run(grepTool.inputSchema.parse({ pattern: "SECRET" }), ctx());
    expect(searched).toEqual({
      state: "success",
      output: `Found 1 file\n${plain}\n${GREP_NOTE}`,
      metadata: { files: 1, entries: 1, skippedHardLinked: 1 },
    });

    await unlink(plain);
    const none = await grepTool.run(
      grepTool.inputSchema.parse({ pattern: "SECRET", output_mode: "content" }),
      ctx(),
    );
    expect(none.output).toBe(`No matches found.\n${GREP_NOTE}`);
  });

  it("all four work on the same file once it has a single link", async () => {
    await unlink(secret);
    expect((await stat(linked)).nlink).toBe(1);

    const read = await readTool.run({ file_path: linked }, ctx());
    expect(read.output).toBe("     1\tTOP SECRET\n");
    const grep = await grepTool.run(
      grepTool.inputSchema.parse({ pattern: "SECRET", path: linked, output_mode: "content" }),
      ctx(),
    );
    expect(grep.output).toBe(`${linked}:1:TOP SECRET`);
    const edit = await editTool.run(
      editTool.inputSchema.parse({ file_path: linked, old_string: "TOP", new_string: "NO" }),
      ctx(),
    );
    expect(edit.state).toBe("success");
    expect(await readFile(linked, "utf8")).toBe("NO SECRET\n");
    const write = await writeTool.run({ file_path: linked, content: "new" }, ctx());
    expect(write.state).toBe("success");
    expect(await readFile(linked, "utf8")).toBe("new");
  });

  it("Write replaces a longer single-link file whole and creates new files", async () => {
    const file = path.join(box.work, "long.txt");
    await writeFile(file, "a much longer old content\n");
    expect((await writeTool.run({ file_path: file, content: "short" }, ctx())).state).toBe(
      "success",
    );
    expect(await readFile(file, "utf8")).toBe("short");

    const created = path.join(box.work, "new/file.txt");
    expect((await writeTool.run({ file_path: created, content: "x" }, ctx())).state).toBe(
      "success",
    );
    expect(await readFile(created, "utf8")).toBe("x");
  });
});

import { readFile, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { editTool } from "../../../src/tools/index.js";
import { sandbox, toolContext } from "./tool-context.js";

let box: Awaited<ReturnType<typeof sandbox>>;
let file: string;
beforeEach(async () => {
  box = await sandbox();
  file = path.join(box.work, "code.ts");
  await writeFile(file, "const a = 1;\nconst b = 2;\nconst c = 1;\n");
});
afterEach(async () => {
  await box.cleanup();
});

const edit = (input: Record<string, unknown>) =>
  editTool.run(editTool.inputSchema.parse({ file_path: file, ...input }), toolContext([box.work]));

describe("Edit", () => {
  it("replaces a unique string and shows the edited lines", async () => {
    const result = await edit({ old_string: "const b = 2;", new_string: "const b = 20;" });
    expect(result.state).toBe("success");
    expect(result.output).toBe(
      `Edited ${file}: replaced 1 occurrence.\n` +
        "     1\tconst a = 1;\n     2\tconst b = 20;\n     3\tconst c = 1;",
    );
    expect(result.metadata).toEqual({ path: file, replacements: 1 });
    expect(await readFile(file, "utf8")).toBe("const a = 1;\nconst b = 20;\nconst c = 1;\n");
  });

  it("errors, changing nothing, when old_string is not found", async () => {
    const result = await edit({ old_string: "const d", new_string: "x" });
    expect(result.state).toBe("error");
    expect(result.output).toMatch(/old_string was not found/);
    expect(await readFile(file, "utf8")).toBe("const a = 1;\nconst b = 2;\nconst c = 1;\n");
  });

  it("errors when old_string is not unique, and replace_all replaces every occurrence", async () => {
    const ambiguous = await edit({ old_string: "= 1;", new_string: "= 9;" });
    expect(ambiguous.state).toBe("error");
    expect(ambiguous.output).toMatch(/occurs 2 times/);
    expect(await readFile(file, "utf8")).toContain("const a = 1;");
    const all = await edit({ old_string: "= 1;", new_string: "= $&9;", replace_all: true });
    expect(all).toMatchObject({ state: "success", metadata: { replacements: 2 } });
    expect(await readFile(file, "utf8")).toBe("const a = $&9;\nconst b = 2;\nconst c = $&9;\n");
  });

  it("errors when old_string equals new_string", async () => {
    const result = await edit({ old_string: "const a", new_string: "const a" });
    expect(result).toMatchObject({
      state: "error",
      output: expect.stringMatching(/the same/) as unknown,
    });
  });

  it("matches LF strings against a CRLF file and keeps CRLF", async () => {
    await writeFile(file, "one\r\ntwo\r\nthree\r\n");
    const result = await edit({ old_string: "one\ntwo", new_string: "1\n2" });
    expect(result.state).toBe("success");
    expect(await readFile(file, "utf8")).toBe("1\r\n2\r\nthree\r\n");
  });

  it("creates a missing file from an empty old_string, and refuses one that has content", async () => {
    const created = path.join(box.work, "new/file.txt");
    const ok = await editTool.run(
      { file_path: created, old_string: "", new_string: "hello", replace_all: false },
      toolContext([box.work]),
    );
    expect(ok).toMatchObject({ state: "success", metadata: { created: true } });
    expect(await readFile(created, "utf8")).toBe("hello");
    const refused = await edit({ old_string: "", new_string: "x" });
    expect(refused).toMatchObject({
      state: "error",
      output: expect.stringMatching(/already has content/) as unknown,
    });
  });

  it("errors on a missing file and a binary file", async () => {
    const missing = await editTool.run(
      {
        file_path: path.join(box.work, "nope"),
        old_string: "a",
        new_string: "b",
        replace_all: false,
      },
      toolContext([box.work]),
    );
    expect(missing).toMatchObject({
      state: "error",
      output: expect.stringMatching(/does not exist/) as unknown,
    });
    await writeFile(file, Buffer.from("a\0b"));
    const binary = await edit({ old_string: "a", new_string: "b" });
    expect(binary).toMatchObject({
      state: "error",
      output: expect.stringMatching(/binary/) as unknown,
    });
  });

  it("refuses a file reached through a symlink pointing out, leaving it unchanged", async () => {
    const secret = path.join(box.outside, "secret.txt");
    await writeFile(secret, "const a = 1;\n");
    await symlink(secret, path.join(box.work, "link.ts"));
    const result = await editTool.run(
      {
        file_path: path.join(box.work, "link.ts"),
        old_string: "1",
        new_string: "2",
        replace_all: false,
      },
      toolContext([box.work]),
    );
    expect(result).toMatchObject({
      state: "error",
      output: expect.stringMatching(/outside/) as unknown,
    });
    expect(await readFile(secret, "utf8")).toBe("const a = 1;\n");
  });

  it("defaults replace_all to false, with a strict schema", () => {
    const s = editTool.inputSchema;
    const parsed = s.parse({ file_path: "/a", old_string: "x", new_string: "y" });
    expect(parsed.replace_all).toBe(false);
    expect(editTool.isReadOnly(parsed)).toBe(false);
    expect(editTool.isConcurrencySafe(parsed)).toBe(false);
    expect(
      s.safeParse({ file_path: "/a", old_string: "x", new_string: "y", all: true }).success,
    ).toBe(false);
    expect(s.safeParse({ file_path: "/a", old_string: "x" }).success).toBe(false);
    expect(
      s.safeParse({ file_path: "/a", old_string: "x", new_string: "y", replace_all: "yes" })
        .success,
    ).toBe(false);
  });
});

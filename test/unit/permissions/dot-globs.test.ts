import { describe, expect, it } from "vitest";
import { dotGlobVariants, mayMatchDotDot } from "../../../src/permissions/dot-globs.js";
import { bash, decide } from "./helpers.js";
import { expectNotReadOnly, expectReadOnly } from "./modes.js";

/**
 * A glob that the shell may expand to `..` (bash before 5.2, dash: `.*` matches `.` and `..`) is
 * judged as `..` too, so `grep -r x .*` is not a read inside the working directories.
 */
describe("globs that may name the parent directory", () => {
  it.each([".*", ".?", ".?*", ".[.]", ".[!a]", "\\.*", ".[[:punct:]]"])("%s may match ..", (g) => {
    expect(mayMatchDotDot(g)).toBe(true);
  });

  it.each(["*", "?", "??", "*.*", "[!_]*", "[.][.]", "[.]*", ".??*", ".[!.]*", ".\\*", "..", "a*"])(
    "%s cannot match ..",
    (g) => {
      expect(mayMatchDotDot(g)).toBe(false);
    },
  );

  it("reads such a path as .. in each segment, then in all of them", () => {
    expect(dotGlobVariants("src/*.ts")).toEqual(["src/*.ts"]);
    expect(dotGlobVariants(".*")).toEqual([".*", ".."]);
    expect(dotGlobVariants("sub/.*/.*")).toEqual([
      "sub/.*/.*",
      "sub/../.*",
      "sub/.*/..",
      "sub/../..",
    ]);
  });

  it("asks for a command whose glob may read the parent, and names it", () => {
    for (const command of ["ls .*", "grep -r secret .*", "cat .?", "ls {a,.*}", "wc -l ./.[!a]"]) {
      expectNotReadOnly(command);
    }
    const decision = decide("Bash", bash("grep -r secret .*"), "default");
    expect(decision.reason).toContain(
      "reads .* (which may expand to ..) outside the working directories",
    );
  });

  it("keeps globs that stay inside read-only", () => {
    for (const command of [
      "cat *",
      "ls -a",
      "ls sub/.*",
      "grep -r x .[!.]*",
      "cat src/*.ts",
      "cd sub && ls .*",
    ]) {
      expectReadOnly(command);
    }
  });

  it("does not take an edit whose glob may name the parent as one inside", () => {
    for (const mode of ["accept_edits", "dont_ask"] as const) {
      expect(decide("Bash", bash("cp .* backup/"), mode).behavior).not.toBe("allow");
      expect(decide("Bash", bash("cp sub/.* backup/"), mode)).toMatchObject({
        behavior: "allow",
      });
    }
  });
});

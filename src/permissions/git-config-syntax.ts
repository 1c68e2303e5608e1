/**
 * git's configuration syntax (`.git/config`, `.gitmodules`), read as git reads it, so that the
 * check sees the settings git will act on and no others.
 */

/** One setting as git reads it: its name lowercased but for the subsection, and its value. */
export interface GitSetting {
  /** `section.key` or `section.subsection.key`. */
  name: string;
  /** Undefined for a key written without `=` (a boolean true). */
  value: string | undefined;
}

export type ParsedGitConfig = { ok: true; settings: GitSetting[] } | { ok: false; reason: string };

/**
 * Parses git's configuration syntax as git does (config.c): sections `[name]`, `[name "sub"]`
 * and `[name.sub]`, keys after a header on the same line, values with quotes, escapes and
 * backslash-newline continuations, `#` and `;` comments. What git would refuse is refused too.
 */
export function parseGitConfig(source: string): ParsedGitConfig {
  const text = source.replace(/^\uFEFF/, "").replace(/\r\n/g, "\n");
  if (text.includes("\0")) return { ok: false, reason: "it holds a NUL byte" };
  const settings: GitSetting[] = [];
  let section: string | undefined;
  let i = 0;
  const fail = (what: string): ParsedGitConfig => {
    const line = text.slice(0, i).split("\n").length;
    return { ok: false, reason: `line ${line}: ${what}` };
  };
  while (i < text.length) {
    const c = text[i] ?? "";
    if (/\s/.test(c)) {
      i += 1;
    } else if (c === "#" || c === ";") {
      while (i < text.length && text[i] !== "\n") i += 1;
    } else if (c === "[") {
      const header = /^\[([A-Za-z0-9.-]+)(?:[ \t]+"((?:[^"\\\n]|\\[^\n])*)")?\]/.exec(
        text.slice(i),
      );
      if (header === null) return fail("a section header git would refuse");
      const subsection = header[2]?.replace(/\\(.)/g, "$1");
      const name = (header[1] ?? "").toLowerCase();
      section = subsection === undefined ? name : `${name}.${subsection}`;
      i += header[0].length;
    } else if (/[A-Za-z]/.test(c)) {
      const key = /^[A-Za-z][A-Za-z0-9-]*/.exec(text.slice(i))?.[0] ?? "";
      i += key.length;
      while (text[i] === " " || text[i] === "\t") i += 1;
      let value: string | undefined;
      if (text[i] === "=") {
        i += 1;
        const parsed = parseValue(text, i);
        if (parsed === undefined) return fail(`a value of ${key} git would refuse`);
        value = parsed.value;
        i = parsed.end;
      } else if (i < text.length && text[i] !== "\n") {
        return fail(`${key} followed by neither "=" nor the line's end`);
      }
      const name = key.toLowerCase();
      settings.push({ name: section === undefined ? name : `${section}.${name}`, value });
    } else {
      return fail(`${JSON.stringify(c)} where a key or a section was expected`);
    }
  }
  return { ok: true, settings };
}

/** A value from `start` (just after `=`) to its line's end: quotes, escapes and continuations. */
function parseValue(text: string, start: number): { value: string; end: number } | undefined {
  let value = "";
  let pendingSpace = "";
  let quoted = false;
  let i = start;
  while (i < text.length && (text[i] === " " || text[i] === "\t")) i += 1;
  for (;;) {
    const c = text[i];
    if (c === undefined || c === "\n") {
      if (quoted) return undefined;
      return { value, end: i };
    }
    i += 1;
    if (!quoted && (c === "#" || c === ";")) {
      while (i < text.length && text[i] !== "\n") i += 1;
      return { value, end: i };
    }
    if (!quoted && (c === " " || c === "\t")) {
      pendingSpace += c;
      continue;
    }
    value += pendingSpace;
    pendingSpace = "";
    if (c === "\\") {
      const next = text[i];
      i += 1;
      if (next === "\n") continue;
      const escaped = { t: "\t", b: "\b", n: "\n", '"': '"', "\\": "\\" }[next ?? ""];
      if (escaped === undefined) return undefined;
      value += escaped;
    } else if (c === '"') {
      quoted = !quoted;
    } else {
      value += c;
    }
  }
}

/**
 * A small, quote-aware lexer for the Bash commands models write. It does not evaluate anything: it
 * splits a command line into simple commands (at `&&`, `||`, `;`, `|`, `|&`, `&`, newlines and
 * parentheses), each with its words and redirections, and records every construct that can run
 * code the split cannot see (`$(…)`, backticks, `<(…)`, `>(…)`, `${…}`, `$'…'`, subshells, function
 * definitions, heredocs that expand) as a risk. Anything it cannot read (an unterminated quote)
 * is a risk too, so a caller that treats risks as "ask" fails closed.
 */

/** One word: `value` with quotes and escapes removed, `raw` as written. */
export interface ShellWord {
  value: string;
  raw: string;
}

/** A redirection such as `2>/dev/null`, `>> log`, `<<EOF`. */
export interface ShellRedirect {
  /** The operator without the fd: `>`, `>>`, `>|`, `<`, `<>`, `<<`, `<<-`, `<<<`, `>&`, `<&`, `&>`, `&>>`. */
  op: string;
  fd?: string;
  /** The file, fd or heredoc delimiter; undefined when the line ended first. */
  target?: ShellWord;
}

/** One simple command. */
export interface ShellCommand {
  words: ShellWord[];
  redirects: ShellRedirect[];
  /** The tokens as written, joined by single spaces: what Bash rules match against. */
  text: string;
  /**
   * The operator that ends it: `&&`, `||`, `|`, `|&`, `;`, `;;`, `&`, a newline, a parenthesis,
   * or "" at the end of the line. A newline right after `&&`, `||` or `|` continues the list and
   * leaves that operator.
   */
  end: string;
  /** Whether a leading `!` negates its pipeline's exit status. */
  negated?: true;
}

export interface ShellScript {
  commands: ShellCommand[];
  /** Constructs that can run code hidden from the split, e.g. "command substitution $(…)". */
  risks: string[];
}

const REDIRECT_OPS = ["&>>", "<<<", "<<-", ">>", ">|", ">&", "<&", "<>", "<<", "&>", ">", "<"];
const SEPARATORS = ["&&", "||", "|&", ";;", "|", ";", "&"];
/** What `$` followed by an opener expands, by the opener: its closer and the risk it is. */
const EXPANSIONS: Record<string, [string, string]> = {
  "(": [")", "command substitution $(…)"],
  "{": ["}", "parameter expansion ${…}"],
  "[": ["]", "arithmetic expansion $[…]"],
};

/** Splits `source` into simple commands and records its risks; never throws. */
export function parseShell(source: string): ShellScript {
  const commands: ShellCommand[] = [];
  const risks = new Set<string>();
  let words: ShellWord[] = [];
  let redirects: ShellRedirect[] = [];
  let tokens: string[] = [];
  let word: ShellWord | undefined;
  let pendingRedirect: ShellRedirect | undefined;
  const heredocs: { delimiter: string; expands: boolean; stripTabs: boolean }[] = [];
  let i = 0;

  const append = (value: string, raw: string): void => {
    word ??= { value: "", raw: "" };
    word.value += value;
    word.raw += raw;
  };
  const endWord = (): void => {
    if (word === undefined) return;
    tokens.push(word.raw);
    if (pendingRedirect !== undefined) {
      pendingRedirect.target = word;
      if (pendingRedirect.op === "<<" || pendingRedirect.op === "<<-") {
        heredocs.push({
          delimiter: word.value,
          expands: word.value === word.raw,
          stripTabs: pendingRedirect.op === "<<-",
        });
      }
      pendingRedirect = undefined;
    } else {
      words.push(word);
    }
    word = undefined;
  };
  const endCommand = (end: string): void => {
    endWord();
    pendingRedirect = undefined;
    // A leading `!` only negates the exit status: it is dropped so rules see the command itself.
    let negated = false;
    while (words[0]?.raw === "!" && tokens[0] === "!") {
      words.shift();
      tokens.shift();
      negated = !negated;
    }
    if (words.length > 0 || redirects.length > 0) {
      const command: ShellCommand = { words, redirects, text: tokens.join(" "), end };
      if (negated) command.negated = true;
      commands.push(command);
    }
    words = [];
    redirects = [];
    tokens = [];
  };
  /** Index just past the `close` that balances the opener before `from`, skipping quotes. */
  const skipBalanced = (from: number, open: string, close: string): number => {
    let depth = 1;
    let j = from;
    while (j < source.length && depth > 0) {
      const c = source[j];
      if (c === "\\") j += 1;
      else if (c === "'" || c === '"' || c === "`") {
        const end = source.indexOf(c, j + 1);
        j = end === -1 ? source.length : end;
      } else if (c === open) depth += 1;
      else if (c === close) depth -= 1;
      j += 1;
    }
    if (depth > 0) risks.add("unbalanced brackets");
    return j;
  };
  const skipBackticks = (from: number): number => {
    let j = from;
    while (j < source.length && source[j] !== "`") j += source[j] === "\\" ? 2 : 1;
    if (j >= source.length) risks.add("unterminated quote");
    return Math.min(j + 1, source.length);
  };
  /** Reads `$…` at `start`; returns the index after it. */
  const readDollar = (start: number): number => {
    const next = source[start + 1] ?? "";
    const expansion = EXPANSIONS[next];
    let end = start + 1;
    if (expansion !== undefined) {
      risks.add(expansion[1]);
      end = skipBalanced(start + 2, next, expansion[0]);
    } else if (next === "'") {
      risks.add("ANSI-C quoting $'…'");
      end = start + 2;
      while (end < source.length && source[end] !== "'") end += source[end] === "\\" ? 2 : 1;
      if (end >= source.length) risks.add("unterminated quote");
      end = Math.min(end + 1, source.length);
    }
    const text = source.slice(start, end);
    append(text, text);
    return end;
  };
  const readHeredocBodies = (): void => {
    for (const doc of heredocs.splice(0)) {
      while (i < source.length) {
        const lineEnd = source.indexOf("\n", i);
        const stop = lineEnd === -1 ? source.length : lineEnd;
        const line = source.slice(i, stop);
        i = stop + 1;
        if ((doc.stripTabs ? line.replace(/^\t+/, "") : line) === doc.delimiter) break;
        if (doc.expands && /\$[({[]|`/.test(line)) risks.add("expansion in a heredoc");
        // Bash joins a line that ends in an unescaped backslash with the next before it compares
        // it with the delimiter, so where such a body ends is not followed here.
        if (doc.expands && /(^|[^\\])(\\\\)*\\$/.test(line)) {
          risks.add("line continuation in a heredoc");
        }
      }
    }
  };

  /** Reads a double-quoted string at `start`; returns the index after it. */
  const readDoubleQuoted = (start: number): number => {
    let j = start + 1;
    let value = "";
    while (j < source.length && source[j] !== '"') {
      const c = source[j] as string;
      if (c === "\\") {
        const next = source[j + 1] ?? "";
        value += '$`"\\\n'.includes(next) ? (next === "\n" ? "" : next) : `\\${next}`;
        j += 2;
      } else if (c === "$" && EXPANSIONS[source[j + 1] ?? ""] !== undefined) {
        const opener = source[j + 1] as string;
        const [close, risk] = EXPANSIONS[opener] as [string, string];
        risks.add(risk);
        const end = skipBalanced(j + 2, opener, close);
        value += source.slice(j, end);
        j = end;
      } else if (c === "`") {
        risks.add("command substitution `…`");
        const end = skipBackticks(j + 1);
        value += source.slice(j, end);
        j = end;
      } else {
        value += c;
        j += 1;
      }
    }
    if (j >= source.length) risks.add("unterminated quote");
    const end = Math.min(j + 1, source.length);
    append(value, source.slice(start, end));
    return end;
  };

  while (i < source.length) {
    const c = source[i] as string;
    const rest = source.slice(i, i + 3);
    // A carriage return is part of a word to bash, not a blank.
    if (c === " " || c === "\t") {
      endWord();
      i += 1;
    } else if (c === "\n") {
      endCommand(c);
      i += 1;
      readHeredocBodies();
    } else if (c === "#" && word === undefined) {
      while (i < source.length && source[i] !== "\n") i += 1;
    } else if (c === "\\") {
      const next = source[i + 1];
      if (next === "\n") i += 2;
      else {
        append(next ?? "", source.slice(i, i + 2));
        i += 2;
      }
    } else if (c === "'") {
      const end = source.indexOf("'", i + 1);
      if (end === -1) risks.add("unterminated quote");
      const stop = end === -1 ? source.length : end;
      append(source.slice(i + 1, stop), source.slice(i, stop + 1));
      i = stop + 1;
    } else if (c === '"') {
      i = readDoubleQuoted(i);
    } else if (c === "$") {
      i = readDollar(i);
    } else if (c === "`") {
      risks.add("command substitution `…`");
      const end = skipBackticks(i + 1);
      append(source.slice(i, end), source.slice(i, end));
      i = end;
    } else if ((c === "<" || c === ">") && source[i + 1] === "(") {
      risks.add(`process substitution ${c}(…)`);
      const end = skipBalanced(i + 2, "(", ")");
      append(source.slice(i, end), source.slice(i, end));
      i = end;
    } else if (c === "(" || c === ")") {
      if (c === "(") {
        const isFunction = word !== undefined || /^\(\s*\)/.test(source.slice(i));
        risks.add(isFunction ? "function definition" : "subshell ( … )");
      }
      endCommand(c);
      i += 1;
    } else {
      const redirect = REDIRECT_OPS.find((op) => rest.startsWith(op));
      const separator = SEPARATORS.find((op) => rest.startsWith(op));
      if (
        redirect !== undefined &&
        !(separator !== undefined && separator.length > redirect.length)
      ) {
        let fd: string | undefined;
        if (word !== undefined && /^\d+$/.test(word.raw)) {
          fd = word.raw;
          word = undefined;
        } else endWord();
        pendingRedirect = fd === undefined ? { op: redirect } : { op: redirect, fd };
        redirects.push(pendingRedirect);
        tokens.push(`${fd ?? ""}${redirect}`);
        i += redirect.length;
      } else if (separator !== undefined) {
        endCommand(separator);
        i += separator.length;
      } else {
        append(c, c);
        i += 1;
      }
    }
  }
  endCommand("");
  if (heredocs.length > 0) readHeredocBodies();
  return { commands, risks: [...risks] };
}

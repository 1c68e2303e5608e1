import { describe, expect, it } from "vitest";
import { parseShell } from "../../../src/permissions/parse-shell.js";

const texts = (source: string): string[] => parseShell(source).commands.map((c) => c.text);
const words = (source: string): string[][] =>
  parseShell(source).commands.map((c) => c.words.map((w) => w.value));

describe("parseShell", () => {
  it.each([
    ["npm test && rm -rf x", ["npm test", "rm -rf x"]],
    ["a; b", ["a", "b"]],
    ["a | b", ["a", "b"]],
    ["a || b", ["a", "b"]],
    ["a & b", ["a", "b"]],
    ["a |& b", ["a", "b"]],
    ["a\nb", ["a", "b"]],
    ["a;b&&c|d", ["a", "b", "c", "d"]],
    ["echo 'a && b'", ["echo 'a && b'"]],
    ['echo "a; b" | grep x', ['echo "a; b"', "grep x"]],
    ["echo a\\;b", ["echo a\\;b"]],
    ["git   commit    -m x", ["git commit -m x"]],
    ["ls # a comment; rm x", ["ls"]],
    ["echo a#b", ["echo a#b"]],
    ["ls \\\n  -la", ["ls -la"]],
    ["! grep x", ["grep x"]],
  ])("splits %j", (source, expected) => {
    expect(texts(source)).toEqual(expected);
  });

  it.each([
    ["a && b || c; d", ["&&", "||", ";", ""]],
    ["a | b |& c & d", ["|", "|&", "&", ""]],
    ["a\nb;", ["\n", ";"]],
    ["a &&\n  b ||\n c", ["&&", "||", ""]],
    ["a |\n b", ["|", ""]],
    ["(a) && b", [")", ""]],
  ])("records the operator that ends each command of %j", (source, expected) => {
    expect(parseShell(source).commands.map((c) => c.end)).toEqual(expected);
  });

  it("marks a command negated by an odd number of leading !", () => {
    const negated = (source: string) => parseShell(source).commands.map((c) => c.negated ?? false);
    expect(negated("! cd x && ls")).toEqual([true, false]);
    expect(negated("! ! cd x; ! ls")).toEqual([false, true]);
  });

  it.each([
    ["echo 'a b' \"c d\" e\\ f", [["echo", "a b", "c d", "e f"]]],
    ['echo "a\\"b" "\\$x" "\\q"', [["echo", 'a"b', "$x", "\\q"]]],
    ["echo ''", [["echo", ""]]],
    ["echo $HOME/x", [["echo", "$HOME/x"]]],
  ])("unquotes words of %j", (source, expected) => {
    expect(words(source)).toEqual(expected);
  });

  it("reads redirections with their fd and target", () => {
    const [command] = parseShell("cmd 2>&1 >> log.txt < in 2>/dev/null &>all").commands;
    expect(command?.words.map((w) => w.value)).toEqual(["cmd"]);
    expect(command?.redirects.map((r) => [r.fd, r.op, r.target?.value])).toEqual([
      ["2", ">&", "1"],
      [undefined, ">>", "log.txt"],
      [undefined, "<", "in"],
      ["2", ">", "/dev/null"],
      [undefined, "&>", "all"],
    ]);
  });

  it("reads an fd only when it touches the operator", () => {
    const [command] = parseShell("echo 2 > f").commands;
    expect(command?.words.map((w) => w.value)).toEqual(["echo", "2"]);
    expect(command?.redirects[0]?.fd).toBeUndefined();
  });

  it("skips heredoc bodies, which are not commands", () => {
    const script = parseShell("cat <<EOF > out\nrm -rf /\nEOF\nls");
    expect(script.commands.map((c) => c.text)).toEqual(["cat << EOF > out", "ls"]);
    expect(script.risks).toEqual([]);
  });

  it("honours <<- tab stripping for the delimiter", () => {
    const script = parseShell("cat <<-EOF\n\tbody\n\tEOF\nls");
    expect(script.commands.map((c) => c.text)).toEqual(["cat <<- EOF", "ls"]);
  });

  it.each([
    ["echo $(id)", "command substitution $(…)"],
    ["echo `id`", "command substitution `…`"],
    ["cat <(ls)", "process substitution <(…)"],
    ["ls >(cat)", "process substitution >(…)"],
    ["echo ${x}", "parameter expansion ${…}"],
    ["echo $'a'", "ANSI-C quoting $'…'"],
    ["(ls)", "subshell ( … )"],
    ["f() { ls; }", "function definition"],
    ["cat <<EOF\n`id`\nEOF", "expansion in a heredoc"],
    ["echo 'x", "unterminated quote"],
    ["echo $(ls", "unbalanced brackets"],
  ])("records the risk in %j", (source, risk) => {
    expect(parseShell(source).risks).toContain(risk);
  });

  it("keeps a command substitution inside one word", () => {
    expect(words("echo $(a; b) c")).toEqual([["echo", "$(a; b)", "c"]]);
  });
});

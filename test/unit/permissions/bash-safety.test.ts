import { describe, expect, it } from "vitest";
import type { PermissionCheck, PermissionMode } from "../../../src/permissions/index.js";
import { allow, bash, decide } from "./helpers.js";

/** Asserts a safety ASK in default mode that an allow-everything rule does not clear. */
function expectSafety(command: string, check: PermissionCheck, reason?: string): void {
  const decision = decide("Bash", bash(command), "default", [allow("Bash")]);
  expect(decision).toMatchObject({
    behavior: "ask",
    check,
    bypassImmune: true,
    suggestedRules: [],
  });
  expect(decision.rule).toBeUndefined();
  if (reason !== undefined) expect(decision.reason).toContain(reason);
}

describe("safety.injection", () => {
  it.each([
    ["echo $(whoami)", "$(…)"],
    ['echo "today is $(date)"', "$(…)"],
    ["echo $((1 + 2))", "$(…)"],
    ["echo `id`", "`…`"],
    ['echo "`id`"', "`…`"],
    ["diff <(ls a) <(ls b)", "<(…)"],
    ["tee >(grep x) < in", ">(…)"],
    ["echo ${HOME}", "${…}"],
    ['echo "${PATH}"', "${…}"],
    ["echo $'\\x72m'", "$'…'"],
    ["(cd /tmp && ls)", "subshell"],
    ["f() { ls; }", "function definition"],
    ["function f { ls; }", "function definition"],
    ["for f in *; do rm $f; done", "loop (for)"],
    ["while true; do echo; done", "loop (while)"],
    ["until false; do echo; done", "loop (until)"],
    ["[[ -f x ]] && echo yes", "[[ … ]]"],
    ["if true; then rm x; fi", "compound command (if)"],
    ["{ ls; }", "command group"],
    ["eval ls", "eval"],
    ["bash -c 'rm -rf /'", "nested shell bash -c"],
    ["find . -exec sh -c 'rm {}' \\;", "nested shell sh -c"],
    ["xargs bash -lc ls", "nested shell bash -c"],
    ["env -S 'rm -rf x'", "env -S"],
    ["$CMD --flag", "variable as command name"],
    ["cat <<EOF\n$(rm -rf ~)\nEOF", "heredoc"],
    ["echo 'unterminated", "unterminated quote"],
    ['echo "unterminated', "unterminated quote"],
    ["touch {a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}", "brace expansion"],
  ])("%s", (command, reason) => expectSafety(command, "safety.injection", reason));

  it.each([
    ["echo '$(whoami)'"],
    ["git log --format='%H ${x}'"],
    ["cat <<'EOF'\n$(not run)\nEOF"],
    ["echo \\$\\(x\\)"],
  ])("quoted constructs are not injection: %s", (command) => {
    expect(decide("Bash", bash(command)).check).not.toBe("safety.injection");
  });
});

describe("safety.dangerous_command", () => {
  it.each([
    ["rm -rf build", "rm -rf"],
    ["rm -fr build", "rm -rf"],
    ["rm -r -f build", "rm -rf"],
    ["rm -Rf build", "rm -rf"],
    ["rm -rfv build", "rm -rf"],
    ["rm --recursive --force build", "rm -rf"],
    ["npm test && rm -rf dist", "rm -rf"],
    ["find . -name '*.o' | xargs rm -rf", "rm -rf"],
    ["find . -exec rm -rf {} +", "rm -rf"],
    ["sudo rm notes.txt", "sudo rm"],
    ["sudo -u root rm notes.txt", "sudo rm"],
    ["doas rm notes.txt", "sudo rm"],
    ["dd if=/dev/zero of=disk.img", "dd"],
    ["sudo dd if=a of=b", "dd"],
    ["mkfs /dev/sdb1", "mkfs"],
    ["mkfs.ext4 /dev/sdb1", "mkfs.ext4"],
    ["fdisk /dev/sda", "fdisk"],
    ["chmod 777 run.sh", "chmod 777"],
    ["chmod -R 777 .", "chmod -R 777"],
    ["chmod a+rwx run.sh", "chmod 777"],
    ["chown -R me:me .", "chown -R"],
    ["chgrp --recursive staff .", "chgrp -R"],
    ["kill -9 1234", "kill -9"],
    ["kill -KILL 1234", "kill -9"],
    ["kill -s KILL 1234", "kill -9"],
    ["kill -SIGKILL 1234", "kill -9"],
    ["pkill -9 node", "pkill -9"],
    ["killall -9 node", "killall -9"],
    ["cat image.iso > /dev/sda", "> /dev/sda"],
    ["echo x 2> /dev/sda1", "> /dev/sda1"],
    ["timeout 5 rm -rf build", "rm -rf"],
  ])("%s", (command, reason) => expectSafety(command, "safety.dangerous_command", reason));

  it.each([
    ["rm -r build"],
    ["rm -f build/a.o"],
    ["chmod 755 run.sh"],
    ["chmod +x run.sh"],
    ["chown me file"],
    ["kill 1234"],
    ["kill -15 1234"],
    ["npm run build > /dev/null 2>&1"],
    ["make 2>/dev/stderr"],
  ])("not dangerous: %s", (command) => {
    expect(decide("Bash", bash(command))).toMatchObject({ behavior: "ask", check: "mode.default" });
  });
});

describe("safety.dangerous_path", () => {
  it.each([
    ["echo 'alias ls=rm' >> ~/.bashrc", ".bashrc"],
    ["echo x > ~/.zshrc", ".zshrc"],
    ["echo x >> /home/me/.profile", ".profile"],
    ["cp my.gitconfig ~/.gitconfig", ".gitconfig"],
    ["cp .env.example .env", ".env"],
    ["echo KEY=1 >> .env.local", ".env.local"],
    ["cp npmrc .npmrc", ".npmrc"],
    ["cp key ~/.ssh/authorized_keys", ".ssh"],
    ["touch .git/hooks/pre-commit", ".git"],
    ["chmod +x .git/hooks/post-checkout", ".git"],
    ["mv a.json .vscode/tasks.json", ".vscode"],
    ["cp a.xml .idea/workspace.xml", ".idea"],
    ["touch .GIT/hooks/x", ".git"],
    ["sed -i 's/a/b/' ~/.bashrc", ".bashrc"],
    ["sed -i -e 's/a/b/' .git/config", ".git"],
    ["touch ~/.{bashrc,other}", ".bashrc"],
    ["npm config set --userconfig=.npmrc x", ".npmrc"],
    ["cd ~/.ssh && rm id_rsa", ".ssh"],
    ["touch /etc/cron.d/job", "/etc"],
    ["git add .env", ".env"],
  ])("%s", (command, reason) => expectSafety(command, "safety.dangerous_path", reason));

  it.each([
    ["sed -i 's/.env/config/' src/a.ts"],
    ["git commit -m 'load .env files'"],
    ["touch .gitignore"],
    ["cp a .github/workflows/ci.yml"],
  ])("not a dangerous path: %s", (command) => {
    expect(decide("Bash", bash(command)).check).toBe("mode.default");
  });

  it("reading a dangerous path is read-only, not a safety ASK", () => {
    expect(decide("Bash", bash("cat .git/config")).check).toBe("read_only");
  });
});

describe("safety.rm_root", () => {
  it.each([
    ["rm -r /", "root directory"],
    ["rm -rf /", "root directory"],
    ["rm /usr", "top-level directory"],
    ["rmdir /usr", "top-level directory"],
    ["rm -r /home", "top-level directory"],
    ["rm -r ~", "home directory"],
    ["rm -r ~/", "home directory"],
    ["rm -r ~other", "home directory"],
    ["rm -r $HOME", "variable"],
    ["rm -r $BUILD/out", "variable"],
    ["rm *", "*"],
    ["rm -r build/*", "build/*"],
    ["rm -r /*", "/*"],
    ["rm -r .*", ".*"],
    ["rm -r ../..", "root directory"],
    ["rm -r ..", "top-level directory"],
    ["rm -r .", "working directory"],
    ["rm -r /work/repo", "working directory"],
    ["sudo rm -rf /", "root directory"],
    ["command rm -v -rf /", "root directory"],
    ["rm -r /{usr,tmp/x}", "top-level directory"],
    ["rm -- -r /", "root directory"],
  ])("%s", (command, reason) => expectSafety(command, "safety.rm_root", reason));

  it("is reported as rm_root, not as the dangerous rm -rf it also is", () => {
    expect(decide("Bash", bash("rm -rf /")).check).toBe("safety.rm_root");
  });

  it.each([["rm -r build"], ["rm -r /work/repo/build"], ["rmdir empty"]])(
    "not a root: %s",
    (command) => expect(decide("Bash", bash(command)).check).toBe("mode.default"),
  );
});

describe("safety checks per mode", () => {
  const cases: [string, PermissionCheck][] = [
    ["echo $(id)", "safety.injection"],
    ["rm -rf build", "safety.dangerous_command"],
    ["echo x >> .env", "safety.dangerous_path"],
    ["rm -r ~", "safety.rm_root"],
  ];
  const expected: Record<PermissionMode, "ask" | "deny" | "allow"> = {
    default: "ask",
    accept_edits: "ask",
    dont_ask: "deny",
    bypass: "allow",
    explore: "deny",
  };
  it.each(
    cases.flatMap(([command, check]) =>
      (Object.keys(expected) as PermissionMode[]).map((mode) => [command, mode, check] as const),
    ),
  )("%s in %s", (command, mode, check) => {
    const decision = decide("Bash", bash(command), mode, [allow("Bash")]);
    expect(decision.behavior).toBe(expected[mode]);
    const deciding =
      mode === "bypass" ? "mode.bypass" : mode === "explore" ? "mode.explore" : check;
    expect(decision.check).toBe(deciding);
    expect(decision.bypassImmune).toBe(deciding.startsWith("safety."));
  });
});

describe("accept_edits and dont_ask: edits inside the working directories", () => {
  it.each([
    ["mkdir -p src/new"],
    ["touch src/a.ts"],
    ["rm build/a.o"],
    ["rm -r build"],
    ["rmdir build/empty"],
    ["mv a.ts src/a.ts"],
    ["cp src/a.ts /work/repo/backup.ts"],
    ["sed -i 's/foo/bar/' src/a.ts"],
    ["mkdir -p out && cp a out/ && ls out"],
    ["cat > notes.md <<'EOF'\nhello\nEOF"],
    ["echo done >> log.txt"],
    ["mkdir src/{a,b}"],
  ])("%s → allow", (command) => {
    for (const mode of ["accept_edits", "dont_ask"] as const) {
      expect(decide("Bash", bash(command), mode)).toMatchObject({
        behavior: "allow",
        check: "working_directory.edit",
      });
    }
  });

  it.each([
    ["touch /tmp/a"],
    ["cp ~/secret.txt ."],
    ["mv a ../elsewhere"],
    ["cd src && touch a.ts"],
    ["FOO=1 touch a"],
    ["sudo touch a"],
    ["npm install"],
    ["mkdir -p out && npm run build"],
    ["echo x > /tmp/out"],
    ["sed -i '/x/d' /srv/hosts"],
  ])("%s → not auto-allowed", (command) => {
    expect(decide("Bash", bash(command), "accept_edits")).toMatchObject({
      behavior: "ask",
      check: "mode.accept_edits",
    });
    expect(decide("Bash", bash(command), "dont_ask")).toMatchObject({
      behavior: "deny",
      check: "mode.dont_ask",
    });
  });
});

describe("programs named by path", () => {
  it.each([
    ["/bin/rm -rf /", "safety.rm_root"],
    ["/bin/rm -rf build", "safety.dangerous_command"],
    ["/usr/bin/sudo /bin/rm notes.txt", "safety.dangerous_command"],
    ["/bin/bash -c 'ls'", "safety.injection"],
    ["/sbin/mkfs.ext4 /dev/sdb1", "safety.dangerous_command"],
  ] satisfies [string, PermissionCheck][])("%s", (command, check) => expectSafety(command, check));

  it("a local program named like a reader is not read-only", () => {
    expect(decide("Bash", bash("./ls")).check).toBe("mode.default");
    expect(decide("Bash", bash("./time ls")).check).toBe("mode.default");
  });
});

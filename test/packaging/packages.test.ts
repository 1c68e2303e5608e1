import { execFile } from "node:child_process";
import { copyFile, mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { healthCheck } from "../helpers/grpc-tools.js";
import { REPO_ROOT, type SpawnedServer, spawnServer, tempDir } from "../helpers/spawn-server.js";

/**
 * The packages as their users get them: `npm pack` of the server package (parkway) and of the light
 * client (@parkway/client, clients/typescript), installed from the tarballs into fresh projects
 * that have no development tools.
 */
const run = promisify(execFile);
const CONSUMER = path.join(REPO_ROOT, "test/packaging/consumer");
const SERVER_PACKAGE = JSON.parse(await readFile(path.join(REPO_ROOT, "package.json"), "utf8")) as {
  version: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

/** Packages that only build or test Parkway: none may reach a user's node_modules. */
const DEV_TOOLS = [
  "tsx",
  "esbuild",
  "typescript",
  "vitest",
  "ts-proto",
  "@bufbuild/buf",
  "@modelcontextprotocol/server-everything",
  "@modelcontextprotocol/server-filesystem",
];
/** What the light client must not pull in: the server's native store, model SDK and the like. */
const SERVER_ONLY = [
  "classic-level",
  "openai",
  "pino",
  "zod",
  "ajv",
  "picomatch",
  "tinyglobby",
  "@modelcontextprotocol/sdk",
];

let tarballs: { server: string; client: string };
let serverProject: string; // parkway only
let clientProject: string; // @parkway/client only
let typesProject: string; // both, with TypeScript, @tsconfig/strictest and @types/node
let server: SpawnedServer | undefined;

async function npm(cwd: string, args: string[]): Promise<string> {
  const { stdout } = await run("npm", args, { cwd, maxBuffer: 16 << 20 });
  return stdout;
}

async function pack(dir: string, into: string): Promise<string> {
  const out = await npm(dir, ["pack", "--ignore-scripts", "--silent", "--pack-destination", into]);
  return path.join(into, out.trim().split("\n").at(-1) ?? "");
}

/** A fresh ESM project with the given packages installed (tarballs or registry specs). */
async function project(name: string, installs: string[]): Promise<string> {
  const dir = path.join(await tempDir("pw-consumer-"), name);
  await mkdir(dir);
  await writeFile(
    path.join(dir, "package.json"),
    JSON.stringify({ name, version: "1.0.0", private: true, type: "module" }),
  );
  await npm(dir, [
    "install",
    "--no-audit",
    "--no-fund",
    "--prefer-offline",
    "--ignore-scripts",
    ...installs,
  ]);
  return dir;
}

/** Every package in `dir/node_modules`, scoped ones as `@scope/name`. */
async function installed(dir: string): Promise<string[]> {
  const names: string[] = [];
  const root = path.join(dir, "node_modules");
  for (const entry of await readdir(root)) {
    if (entry.startsWith(".")) continue;
    if (entry.startsWith("@")) {
      for (const inner of await readdir(path.join(root, entry))) names.push(`${entry}/${inner}`);
    } else {
      names.push(entry);
    }
  }
  return names.sort();
}

async function node(cwd: string, args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, args, { cwd });
  return stdout.trim();
}

beforeAll(async () => {
  const packs = await tempDir("pw-packs-");
  tarballs = {
    server: await pack(REPO_ROOT, packs),
    client: await pack(path.join(REPO_ROOT, "clients/typescript"), packs),
  };
  const dev = SERVER_PACKAGE.devDependencies;
  [serverProject, clientProject, typesProject] = await Promise.all([
    project("server-consumer", [tarballs.server]),
    project("client-consumer", [tarballs.client]),
    project("types-consumer", [
      tarballs.server,
      tarballs.client,
      `zod@${SERVER_PACKAGE.dependencies.zod}`,
      `typescript@${dev.typescript}`,
      `@tsconfig/strictest@${dev["@tsconfig/strictest"]}`,
      `@types/node@${dev["@types/node"]}`,
    ]),
  ]);
}, 600_000);

afterAll(async () => {
  await server?.stop();
});

/** Whether this Node requires an ES module from CommonJS (unflagged from 20.19). */
const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
const REQUIRES_ESM = major > 20 || (major === 20 && minor >= 19);

describe("the server package, installed from its tarball", () => {
  it.runIf(REQUIRES_ESM)("is required from CommonJS: every entry", async () => {
    const types = await node(serverProject, [
      "-e",
      'const s = require("parkway"); const c = require("parkway/client");' +
        'const w = require("parkway/web");' +
        "console.log([s.startParkway, c.createParkwayClient, w.createWebClient].map(f => typeof f).join())",
    ]);
    expect(types).toBe("function,function,function");
  });

  it("is imported by plain Node: every entry, no TypeScript runtime", async () => {
    const typeOf = await node(serverProject, [
      "-e",
      'import("parkway").then(m => console.log(typeof m.startParkway))',
    ]);
    expect(typeOf).toBe("function");
    const exports = JSON.parse(
      await node(serverProject, [
        "--input-type=module",
        "-e",
        'const s = await import("parkway"); const c = await import("parkway/client");' +
          'const w = await import("parkway/web");' +
          "console.log(JSON.stringify({ server: Object.keys(s), client: Object.keys(c), web: Object.keys(w) }))",
      ]),
    ) as { server: string[]; client: string[]; web: string[] };
    expect(exports.server).toEqual(
      expect.arrayContaining([
        "startParkway",
        "parseConfig",
        "loadConfig",
        "defineTool",
        "builtinTools",
        "createOpenAIModel",
        "startScriptedModel",
        "createLevelStore",
        "defineRecord",
        "ParkwayError",
        "StoreDamagedError",
      ]),
    );
    expect(exports.client).toEqual(
      expect.arrayContaining(["createParkwayClient", "ParkwaySession", "FinishedReason"]),
    );
    expect(exports.web).toEqual(
      expect.arrayContaining(["createWebClient", "watchSession", "allow", "AgentService"]),
    );
    const packages = await installed(serverProject);
    expect(packages).toContain("parkway");
    expect(packages.filter((name) => DEV_TOOLS.includes(name))).toEqual([]);
  });

  it("runs `npx parkway --help`, and serves, answers health and the console with `npx parkway serve`", async () => {
    const help = await run("npx", ["--no-install", "parkway", "--help"], { cwd: serverProject });
    expect(help.stdout).toMatch(/^usage:\n {2}parkway serve/);
    server = await spawnServer({
      command: { file: "npx", args: ["--no-install", "parkway", "serve"], cwd: serverProject },
      args: ["--web-listen", "127.0.0.1:0"],
    });
    expect(await healthCheck(server.address)).toBe("SERVING");
    expect(await healthCheck(server.address, "parkway.v1.AgentService")).toBe("SERVING");
    // The web port serves the console the package ships (dist/console).
    const page = await fetch(server.webUrl!);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("<title>Parkway console</title>");
    const script = /src="\.\/(assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    expect(await fetch(new URL(script!, server.webUrl)).then((r) => r.status)).toBe(200);
  });
});

describe("the light client, @parkway/client, installed from its tarball", () => {
  it("has none of the server's dependencies and no development tool", async () => {
    const packages = await installed(clientProject);
    expect(packages).toContain("@parkway/client");
    expect(packages.filter((name) => [...DEV_TOOLS, ...SERVER_ONLY].includes(name))).toEqual([]);
    expect(packages).not.toContain("parkway");
    // @grpc/grpc-js and @bufbuild/protobuf with what they need: 35 packages in all today.
    expect(packages.length).toBeLessThanOrEqual(40);
    console.log(`@parkway/client installs ${packages.length} packages: ${packages.join(", ")}`);
  });

  it.runIf(REQUIRES_ESM)("is required from CommonJS", async () => {
    const type = await node(clientProject, [
      "-e",
      'console.log(typeof require("@parkway/client").createParkwayClient)',
    ]);
    expect(type).toBe("function");
  });

  it("exports what parkway/client exports", async () => {
    const script = (name: string) =>
      `const m = await import("${name}"); console.log(JSON.stringify(Object.keys(m).sort()))`;
    const light = await node(clientProject, [
      "--input-type=module",
      "-e",
      script("@parkway/client"),
    ]);
    const full = await node(serverProject, ["--input-type=module", "-e", script("parkway/client")]);
    expect(JSON.parse(light)).toEqual(JSON.parse(full));
  });

  it("drives a reply from plain Node against the installed server", async () => {
    expect(server, "the server test above started it").toBeDefined();
    await copyFile(path.join(CONSUMER, "ask.mjs"), path.join(clientProject, "ask.mjs"));
    const result = JSON.parse(await node(clientProject, ["ask.mjs", server!.address])) as {
      agents: string[];
      finished: string;
      text: string;
    };
    expect(result.agents.length).toBeGreaterThan(0);
    expect(result.finished).toBe("FINISHED_REASON_COMPLETED");
    expect(result.text).toContain("Parkway demo model");
  });
});

describe("a strict TypeScript consumer", () => {
  for (const [module, moduleResolution] of [
    ["node16", "node16"],
    ["esnext", "bundler"],
  ] as const) {
    it(`compiles against both packages under @tsconfig/strictest with moduleResolution ${moduleResolution}, libraries checked too`, async () => {
      for (const file of ["server-app.ts", "client-app.ts"]) {
        await copyFile(path.join(CONSUMER, file), path.join(typesProject, file));
      }
      const tsconfig = `tsconfig.${moduleResolution}.json`;
      await writeFile(
        path.join(typesProject, tsconfig),
        JSON.stringify({
          extends: "@tsconfig/strictest/tsconfig.json",
          compilerOptions: {
            target: "ES2022",
            lib: ["ES2022"],
            module,
            moduleResolution,
            types: ["node"],
            noEmit: true,
            // Check the packages' declarations as well, not only the consumer's own files.
            skipLibCheck: false,
          },
          files: ["server-app.ts", "client-app.ts"],
        }),
      );
      const tsc = path.join(typesProject, "node_modules/typescript/bin/tsc");
      const result = await run(process.execPath, [tsc, "-p", tsconfig], { cwd: typesProject }).then(
        (r) => ({ code: 0, output: r.stdout + r.stderr }),
        (e: { code: number; stdout: string; stderr: string }) => ({
          code: e.code,
          output: e.stdout + e.stderr,
        }),
      );
      expect(result.output).toBe("");
      expect(result.code).toBe(0);
      // tsc over both packages' declarations takes a while on a loaded machine.
    }, 180_000);
  }

  it("finds no problem with @arethetypeswrong/cli in either tarball (ESM only)", async () => {
    const attw = path.join(REPO_ROOT, "node_modules/.bin/attw");
    for (const tarball of [tarballs.server, tarballs.client]) {
      // Exits non-zero (and run() rejects) on any problem the esm-only profile does not ignore.
      const { stdout } = await run(attw, [tarball, "--profile", "esm-only", "--format", "json"], {
        cwd: REPO_ROOT,
        maxBuffer: 16 << 20,
      });
      const report = JSON.parse(stdout) as {
        problems: Record<string, { resolutionKind?: string; entrypoint?: string }[]>;
      };
      // The profile leaves out CommonJS consumers (node10, require from node16): both are ESM only.
      const counted = Object.values(report.problems)
        .flat()
        .filter((p) => p.resolutionKind !== "node10" && p.resolutionKind !== "node16-cjs");
      expect(counted).toEqual([]);
    }
  });
});

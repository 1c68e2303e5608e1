// Lint: type-aware rules that catch async bugs, import cycles, and imports against the layer arrows
// of DESIGN.md §1 (each layer may import only the layers below it).
import { builtinModules } from "node:module";
import js from "@eslint/js";
import importX from "eslint-plugin-import-x";
import tseslint from "typescript-eslint";

/**
 * Lets files under `folder` import, of Parkway, only their own folder and the folders `allowed`
 * gives (see `importsOnly`), plus the `extra` patterns (negations that let a package through).
 */
function layer(folder, allowed, message, extra = []) {
  const forbidden = [...allowed(folder), ...extra];
  return {
    files: [`src/${folder}/**/*.ts`],
    rules: {
      "@typescript-eslint/no-restricted-imports": [
        "error",
        { patterns: [{ group: forbidden, message, allowTypeImports: false }] },
      ],
    },
  };
}

/** Packages and the files that alone may import them. */
const PACKAGE_OWNERS = [
  {
    // src/browser speaks Connect; its browser rule (browserOnly) keeps gRPC out of it.
    owners: [
      "src/server/**",
      "src/client/**",
      "src/browser/**",
      "src/generated/**",
      "src/cli/**",
      "src/index.ts",
    ],
    paths: [{ name: "@grpc/grpc-js", message: "Only src/server and src/client speak gRPC." }],
    patterns: [
      {
        group: ["@connectrpc/*"],
        message:
          "Only src/server (the web port), src/client and src/browser speak Connect and gRPC-web.",
      },
    ],
  },
  {
    owners: ["src/model/openai*.ts"],
    paths: [{ name: "openai", message: "Only src/model/openai* imports openai." }],
  },
  {
    owners: ["src/store/level*.ts"],
    paths: [
      { name: "classic-level", message: "Only src/store/level* imports LevelDB." },
      { name: "level", message: "Only src/store/level* imports LevelDB." },
    ],
  },
  {
    owners: ["src/store/postgres/**"],
    paths: [{ name: "pg", message: "Only src/store/postgres imports pg." }],
  },
  {
    owners: ["src/telemetry/**"],
    paths: [{ name: "prom-client", message: "Only src/telemetry imports prom-client." }],
    patterns: [
      {
        group: ["@opentelemetry/*"],
        message:
          "Only src/telemetry imports OpenTelemetry; the other layers get src/common/telemetry.",
      },
    ],
  },
  {
    owners: ["src/tools/mcp/**"],
    patterns: [
      {
        group: ["@modelcontextprotocol/sdk", "@modelcontextprotocol/sdk/**"],
        message: "Only src/tools/mcp imports the MCP SDK.",
      },
    ],
  },
];

/**
 * `no-restricted-imports` for `src/**`: each file may import the packages whose owners include it
 * and none of the others. One config per set of owned packages, most specific last.
 */
function onlyImportedBy(owners) {
  const rule = (except) => {
    const rest = owners.filter((o) => o !== except);
    return [
      "error",
      {
        paths: rest.flatMap((o) => o.paths ?? []),
        patterns: rest.flatMap((o) => o.patterns ?? []),
      },
    ];
  };
  return [
    { files: ["src/**/*.ts"], rules: { "no-restricted-imports": rule(undefined) } },
    ...owners.map((o) => ({ files: o.owners, rules: { "no-restricted-imports": rule(o) } })),
  ];
}

/**
 * The rule for code that runs in browsers (src/browser and the console): no Node built-in, no gRPC
 * runtime, no Node-only Connect package, and of Parkway only the folders `allowed` gives.
 */
function browserOnly(files, allowed, message) {
  return {
    files,
    rules: {
      "@typescript-eslint/no-restricted-imports": [
        "error",
        {
          paths: builtinModules.map((name) => ({ name, message })),
          patterns: [
            {
              group: [...allowed, "node:*", "@grpc/*", "@connectrpc/connect-node", "pg", "pino"],
              message,
              allowTypeImports: false,
            },
          ],
        },
      ],
    },
  };
}

/** Parkway's folders under src/ (`runtime` and `index.ts` sit above them all). */
const FOLDERS = [
  "common",
  "config",
  "store",
  "permissions",
  "model",
  "tools",
  "agent",
  "session",
  "server",
  "generated",
  "generated-es",
  "client",
  "browser",
  "cli",
  "telemetry",
  "runtime",
];

/** The import patterns of every folder but `allowed` and the importing folder itself. */
function importsOnly(...allowed) {
  return (self) => {
    const names = FOLDERS.filter((n) => n !== self && !allowed.includes(n));
    return names.map((n) => `**/${n}/**`).concat(names.map((n) => `../${n}/*`));
  };
}

export default tseslint.config(
  {
    ignores: [
      "src/generated/**",
      "src/generated-es/**",
      "clients/**",
      "node_modules/**",
      "dist/**",
      "data/**",
      "bench/results/**",
      "test/packaging/consumer/**",
      ".venv/**",
      ".tools/**",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: {
          allowDefaultProject: ["*.js", "bin/*.js", "bench/servers/*.mjs"],
        },
      },
    },
    plugins: { "import-x": importX },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
      "import-x/no-cycle": ["error", { ignoreExternal: true }],
      "no-restricted-syntax": [
        "error",
        {
          selector: "MemberExpression[object.name='process'][property.name='env']",
          message: "Only src/config reads the environment.",
        },
      ],
    },
    settings: { "import-x/resolver": { node: { extensions: [".ts", ".js"] } } },
  },
  { files: ["**/*.js", "**/*.mjs"], ...tseslint.configs.disableTypeChecked },
  {
    files: [
      "src/config/**/*.ts",
      "test/**/*.ts",
      "test/**/*.mjs",
      "bench/**/*.ts",
      "examples/**/*.ts",
      "*.js",
      "bin/*.js",
    ],
    rules: { "no-restricted-syntax": "off" },
  },
  // The arrows of DESIGN.md §1: what each layer may import of Parkway besides itself.
  layer("store", importsOnly("common", "config"), "src/store is the bottom layer."),
  layer(
    "permissions",
    importsOnly("common", "config"),
    "src/permissions is pure and imports no other layer.",
  ),
  layer("model", importsOnly("common", "config", "store"), "src/model sits below the agent."),
  layer(
    "tools",
    importsOnly("common", "config", "store", "permissions"),
    "src/tools sits below the agent.",
    // The MCP SDK's own `client/` folder is not Parkway's client.
    ["!@modelcontextprotocol/sdk/**"],
  ),
  layer(
    "agent",
    importsOnly("common", "config", "store", "permissions", "model", "tools"),
    "src/agent sits below sessions.",
  ),
  layer(
    "session",
    importsOnly("common", "config", "store", "permissions", "model", "tools", "agent"),
    "src/session sits below the transport.",
  ),
  layer(
    "server",
    importsOnly(
      "common",
      "config",
      "store",
      "permissions",
      "model",
      "tools",
      "agent",
      "session",
      "generated",
    ),
    "src/server does not import the client, the CLI or the telemetry exporters.",
  ),
  layer(
    "telemetry",
    importsOnly("common"),
    "src/telemetry implements src/common/telemetry and imports no other layer.",
  ),
  layer(
    "client",
    importsOnly("common", "generated"),
    "src/client imports only src/generated and src/common.",
  ),
  layer("common", importsOnly(), "src/common imports nothing of Parkway."),
  browserOnly(
    ["src/browser/**/*.ts"],
    importsOnly("generated-es")("browser"),
    "src/browser runs in browsers: it imports only src/generated-es and browser-safe packages.",
  ),
  browserOnly(
    ["console/src/**/*.ts"],
    importsOnly("browser", "generated-es")(undefined),
    "The console runs in browsers: of Parkway it imports only src/browser.",
  ),
  // Packages only one part of the code imports. Every file gets one rule with all restrictions
  // that apply to it (a later config's rule replaces an earlier one's, so they are not stacked).
  ...onlyImportedBy(PACKAGE_OWNERS),
  {
    files: ["test/**/*.ts"],
    rules: {
      "@typescript-eslint/no-non-null-assertion": "off",
      "@typescript-eslint/unbound-method": "off",
    },
  },
  {
    // The session core, the reply loop and the PostgreSQL store stay in files of one idea each.
    files: ["src/session/**/*.ts", "src/agent/**/*.ts", "src/store/postgres/**/*.ts"],
    rules: { "max-lines": ["error", { max: 300 }] },
  },
);

import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

/** Builds the console into dist/console/, which the web port serves at `/`. */
export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "./",
  logLevel: "warn",
  build: {
    outDir: fileURLToPath(new URL("../dist/console", import.meta.url)),
    emptyOutDir: true,
    target: "es2022",
    sourcemap: false,
  },
});

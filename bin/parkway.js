#!/usr/bin/env node
// The `parkway` command: runs the TypeScript sources through tsx's loader.
import { register } from "tsx/esm/api";

register();
await import("../src/cli/main.ts");

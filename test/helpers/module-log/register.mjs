// `node --import` this file to log the ES modules a process loads (see hooks.mjs).
import { register } from "node:module";
import { URL } from "node:url";

register(new URL("./hooks.mjs", import.meta.url));

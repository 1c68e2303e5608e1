export * from "../../src/browser/index.js";
export type { Timestamp } from "@bufbuild/protobuf/wkt";
export type { JsonObject } from "@bufbuild/protobuf";

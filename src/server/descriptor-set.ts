import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { fromBinary } from "@bufbuild/protobuf";
import { type FileDescriptorSet, FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";

/**
 * The descriptor set that `npm run gen` builds from proto/, with every imported file and the vendored
 * grpc.health.v1 health.proto (copied beside the compiled code by the build).
 */
const DESCRIPTOR_SET = fileURLToPath(new URL("../generated/parkway.binpb", import.meta.url));

let cached: FileDescriptorSet | undefined;

/** The parsed descriptor set, read once. */
export function descriptorSet(): FileDescriptorSet {
  cached ??= fromBinary(FileDescriptorSetSchema, readFileSync(DESCRIPTOR_SET));
  return cached;
}

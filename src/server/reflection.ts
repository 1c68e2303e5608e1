import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import type { Server } from "@grpc/grpc-js";
import type { PackageDefinition } from "@grpc/proto-loader";
import { ReflectionService } from "@grpc/reflection";

/**
 * The descriptor set that `npm run gen` builds from proto/, with every imported file and the vendored
 * grpc.health.v1 health.proto.
 */
const DESCRIPTOR_SET = fileURLToPath(new URL("../generated/parkway.binpb", import.meta.url));

/**
 * Adds gRPC server reflection (v1 and v1alpha) for the parkway.v1 services and grpc.health.v1.Health.
 * It serves the real per-file descriptors, with their imports, so reflection clients resolve every
 * referenced type (google.protobuf.*, google.rpc.*) by file name and by symbol.
 */
export function addReflection(server: Server): void {
  const set = fromBinary(FileDescriptorSetSchema, readFileSync(DESCRIPTOR_SET));
  const files = set.file.map((file) => toBinary(FileDescriptorProtoSchema, file));
  // The reflection service reads only `fileDescriptorProtos` from each entry of the definition.
  const definition = {
    parkway: { format: "Protocol Buffer 3 FileDescriptorProto", fileDescriptorProtos: files },
  } as unknown as PackageDefinition;
  new ReflectionService(definition).addToServer(server);
}

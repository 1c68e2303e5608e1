import { toBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import type { Server } from "@grpc/grpc-js";
import type { PackageDefinition } from "@grpc/proto-loader";
import { ReflectionService } from "@grpc/reflection";
import { descriptorSet } from "./descriptor-set.js";

/**
 * Adds gRPC server reflection (v1 and v1alpha) for the parkway.v1 services and grpc.health.v1.Health.
 * It serves the real per-file descriptors, with their imports, so reflection clients resolve every
 * referenced type (google.protobuf.*, google.rpc.*) by file name and by symbol.
 */
export function addReflection(server: Server): void {
  const files = descriptorSet().file.map((file) => toBinary(FileDescriptorProtoSchema, file));
  // The reflection service reads only `fileDescriptorProtos` from each entry of the definition.
  const definition = {
    parkway: { format: "Protocol Buffer 3 FileDescriptorProto", fileDescriptorProtos: files },
  } as unknown as PackageDefinition;
  new ReflectionService(definition).addToServer(server);
}

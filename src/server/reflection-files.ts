import { toBinary } from "@bufbuild/protobuf";
import type { PackageDefinition } from "@grpc/proto-loader";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { ReflectionService } from "@grpc/reflection";
import { descriptorSet } from "./descriptor-set.js";

/**
 * The reflection service over Parkway's descriptors, with every imported file. Loaded on the first
 * reflection call (see `addReflection`): the descriptors and the protobuf runtime that reads them
 * cost start-up time.
 */
export function parkwayReflection(): ReflectionService {
  const files = descriptorSet().file.map((file) => toBinary(FileDescriptorProtoSchema, file));
  // The reflection service reads only `fileDescriptorProtos` from each entry of the definition.
  return new ReflectionService({
    parkway: { format: "Protocol Buffer 3 FileDescriptorProto", fileDescriptorProtos: files },
  } as unknown as PackageDefinition);
}

import { toBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import type {
  Server,
  ServiceDefinition,
  UntypedHandleCall,
  UntypedServiceImplementation,
} from "@grpc/grpc-js";
import type { PackageDefinition } from "@grpc/proto-loader";
import { ReflectionService } from "@grpc/reflection";
import { descriptorSet } from "./descriptor-set.js";

type Services = { service: ServiceDefinition; impl: UntypedServiceImplementation }[];

/** The services `reflection` adds to a server, as it would add them. */
function servicesOf(reflection: ReflectionService): Services {
  const services: Services = [];
  reflection.addToServer({
    addService: (service: ServiceDefinition, impl: UntypedServiceImplementation) =>
      services.push({ service, impl }),
  });
  return services;
}

/** The reflection service over Parkway's descriptors, with every imported file. */
function parkwayReflection(): ReflectionService {
  const files = descriptorSet().file.map((file) => toBinary(FileDescriptorProtoSchema, file));
  // The reflection service reads only `fileDescriptorProtos` from each entry of the definition.
  return new ReflectionService({
    parkway: { format: "Protocol Buffer 3 FileDescriptorProto", fileDescriptorProtos: files },
  } as unknown as PackageDefinition);
}

/**
 * Adds gRPC server reflection (v1 and v1alpha) for the parkway.v1 services and grpc.health.v1.Health.
 * It serves the real per-file descriptors, with their imports, so reflection clients resolve every
 * referenced type (google.protobuf.*, google.rpc.*) by file name and by symbol. The descriptors
 * are read and indexed on the first reflection call, not at start.
 */
export function addReflection(server: Server): void {
  let loaded: Services | undefined;
  const empty = servicesOf(new ReflectionService({}));
  for (const [i, { service, impl }] of empty.entries()) {
    const lazy: UntypedServiceImplementation = {};
    for (const method of Object.keys(impl)) {
      lazy[method] = ((call: never, callback: never) => {
        loaded ??= servicesOf(parkwayReflection());
        const handler = loaded[i]!.impl[method] as (call: never, callback: never) => void;
        handler(call, callback);
      }) as UntypedHandleCall;
    }
    server.addService(service, lazy);
  }
}

import type {
  Server,
  ServerDuplexStream,
  ServiceDefinition,
  UntypedHandleCall,
  UntypedServiceImplementation,
} from "@grpc/grpc-js";
import { ReflectionService } from "@grpc/reflection";

type Services = { service: ServiceDefinition; impl: UntypedServiceImplementation }[];

/** The reflection services' definitions, the same for every server of the process. */
let empty: Services | undefined;

/** The services `reflection` adds to a server, as it would add them. */
function servicesOf(reflection: ReflectionService): Services {
  const services: Services = [];
  reflection.addToServer({
    addService: (service: ServiceDefinition, impl: UntypedServiceImplementation) =>
      services.push({ service, impl }),
  });
  return services;
}

/**
 * Adds gRPC server reflection (v1 and v1alpha) for the parkway.v1 services and grpc.health.v1.Health.
 * It serves the real per-file descriptors, with their imports, so reflection clients resolve every
 * referenced type (google.protobuf.*, google.rpc.*) by file name and by symbol. The descriptors,
 * and the module that reads them, are loaded on the first reflection call, not at start; the
 * services' own definitions are made once per process.
 */
export function addReflection(server: Server): void {
  let loaded: Promise<Services> | undefined;
  empty ??= servicesOf(new ReflectionService({}));
  for (const [i, { service, impl }] of empty.entries()) {
    const lazy: UntypedServiceImplementation = {};
    for (const method of Object.keys(impl)) {
      lazy[method] = ((call: ServerDuplexStream<unknown, unknown>, callback: never) => {
        loaded ??= import("./reflection-files.js").then((m) => servicesOf(m.parkwayReflection()));
        loaded.then(
          (services) => {
            const handler = services[i]!.impl[method] as (call: unknown, callback: never) => void;
            handler(call, callback);
          },
          (err: Error) => call.destroy(err),
        );
      }) as UntypedHandleCall;
    }
    server.addService(service, lazy);
  }
}

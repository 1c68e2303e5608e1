import { fileURLToPath } from "node:url";
import type { Server } from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { ReflectionService } from "@grpc/reflection";

/** The proto sources shipped with the package. */
export const PROTO_ROOT = fileURLToPath(new URL("../../proto", import.meta.url));

/** The files whose services reflection lists. */
const PROTO_FILES = ["parkway/v1/agent_service.proto", "parkway/v1/permission.proto"];

/** Adds gRPC server reflection (v1 and v1alpha) for the parkway.v1 services. */
export function addReflection(server: Server): void {
  const definition = loadSync(PROTO_FILES, {
    includeDirs: [PROTO_ROOT],
    keepCase: true,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  new ReflectionService(definition).addToServer(server);
}

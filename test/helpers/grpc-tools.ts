import path from "node:path";
import { createRequire } from "node:module";
import {
  type ChannelCredentials,
  type Client,
  credentials,
  loadPackageDefinition,
  type ServiceClientConstructor,
} from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";

const require = createRequire(import.meta.url);

function serviceClient(
  protoFile: string,
  service: string,
  includeDir: string,
): ServiceClientConstructor {
  const definition = loadSync(protoFile, {
    includeDirs: [includeDir],
    keepCase: true,
    enums: String,
  });
  const loaded = loadPackageDefinition(definition) as Record<string, unknown>;
  let node: unknown = loaded;
  for (const part of service.split(".")) node = (node as Record<string, unknown>)[part];
  return node as ServiceClientConstructor;
}

/**
 * Calls grpc.health.v1.Health/Check and resolves with the status name (e.g. "SERVING"); plaintext
 * unless `creds` says otherwise.
 */
export async function healthCheck(
  address: string,
  service = "",
  creds: ChannelCredentials = credentials.createInsecure(),
): Promise<string> {
  const dir = path.dirname(require.resolve("grpc-health-check/package.json"));
  const Health = serviceClient(
    "health/v1/health.proto",
    "grpc.health.v1.Health",
    path.join(dir, "proto"),
  );
  const client = new Health(address, creds) as unknown as Client & {
    check(req: object, cb: (err: Error | null, res?: { status: string }) => void): void;
  };
  try {
    return await new Promise<string>((resolve, reject) =>
      client.check({ service }, (err, res) => (err ? reject(err) : resolve(res?.status ?? ""))),
    );
  } finally {
    client.close();
  }
}

/** Lists the services reported by gRPC server reflection v1. */
export async function listServices(address: string): Promise<string[]> {
  const dir = path.dirname(require.resolve("@grpc/reflection/package.json"));
  const Reflection = serviceClient(
    "grpc/reflection/v1/reflection.proto",
    "grpc.reflection.v1.ServerReflection",
    path.join(dir, "build", "proto"),
  );
  const client = new Reflection(address, credentials.createInsecure()) as unknown as Client & {
    ServerReflectionInfo(): NodeJS.ReadWriteStream & { write(m: object): boolean; end(): void };
  };
  try {
    return await new Promise<string[]>((resolve, reject) => {
      const call = client.ServerReflectionInfo();
      call.on("data", (res: { list_services_response?: { service: { name: string }[] } }) => {
        resolve(res.list_services_response?.service.map((s) => s.name) ?? []);
        call.end();
      });
      call.on("error", reject);
      call.write({ list_services: "" });
    });
  } finally {
    client.close();
  }
}

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
import { fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";

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

type ReflectionStream = NodeJS.ReadWriteStream & { write(m: object): boolean; end(): void };

/** One gRPC server reflection v1 response (keepCase names). */
interface ReflectionResponse {
  list_services_response?: { service: { name: string }[] };
  file_descriptor_response?: { file_descriptor_proto: Buffer[] };
  error_response?: { error_code: number; error_message: string };
}

/** Runs `fn` over one plaintext gRPC server reflection v1 stream. */
async function withReflection<T>(
  address: string,
  fn: (ask: (request: object) => Promise<ReflectionResponse>) => Promise<T>,
): Promise<T> {
  const dir = path.dirname(require.resolve("@grpc/reflection/package.json"));
  const Reflection = serviceClient(
    "grpc/reflection/v1/reflection.proto",
    "grpc.reflection.v1.ServerReflection",
    path.join(dir, "build", "proto"),
  );
  const client = new Reflection(address, credentials.createInsecure()) as unknown as Client & {
    ServerReflectionInfo(): ReflectionStream;
  };
  const call = client.ServerReflectionInfo();
  const waiting: { resolve: (r: ReflectionResponse) => void; reject: (e: Error) => void }[] = [];
  call.on("data", (res: ReflectionResponse) => waiting.shift()?.resolve(res));
  call.on("error", (err: Error) => {
    for (const w of waiting.splice(0)) w.reject(err);
  });
  try {
    return await fn(
      (request) =>
        new Promise<ReflectionResponse>((resolve, reject) => {
          waiting.push({ resolve, reject });
          call.write(request);
        }),
    );
  } finally {
    call.end();
    client.close();
  }
}

/** Lists the services reported by gRPC server reflection v1. */
export async function listServices(address: string): Promise<string[]> {
  return withReflection(address, async (ask) => {
    const res = await ask({ list_services: "" });
    return res.list_services_response?.service.map((s) => s.name) ?? [];
  });
}

/**
 * The serialized FileDescriptorProtos that define `symbol` and everything they import, as a
 * reflection-only client gets them: by symbol, then each missing import by file name.
 */
export async function reflectionFiles(address: string, symbol: string): Promise<Buffer[]> {
  return withReflection(address, async (ask) => {
    const files = new Map<string, Buffer>();
    const missing = new Set<string>();
    const take = (res: ReflectionResponse) => {
      if (res.error_response) throw new Error(res.error_response.error_message);
      for (const bytes of res.file_descriptor_response?.file_descriptor_proto ?? []) {
        const file = fromBinary(FileDescriptorProtoSchema, bytes);
        files.set(file.name, bytes);
        missing.delete(file.name);
        for (const dep of file.dependency) if (!files.has(dep)) missing.add(dep);
      }
    };
    take(await ask({ file_containing_symbol: symbol }));
    while (missing.size > 0) {
      const [name] = missing;
      missing.delete(name!);
      take(await ask({ file_by_filename: name }));
    }
    return [...files.values()];
  });
}

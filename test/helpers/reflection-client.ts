import {
  create,
  createFileRegistry,
  type DescMessage,
  type FileRegistry,
  fromBinary,
  fromJson,
  type JsonValue,
  toBinary,
  toJson,
} from "@bufbuild/protobuf";
import {
  type FileDescriptorProto,
  FileDescriptorProtoSchema,
  FileDescriptorSetSchema,
} from "@bufbuild/protobuf/wkt";
import { Client, credentials, Metadata, type ServiceError, status } from "@grpc/grpc-js";
import { listServices, reflectionFiles } from "./grpc-tools.js";

/** What a call made from reflection alone returned: its responses as JSON, and its status. */
export interface ReflectedCallResult {
  responses: JsonValue[];
  code: status;
  details: string;
}

/** The files ordered so that each comes after every file it imports. */
function importsFirst(files: FileDescriptorProto[]): FileDescriptorProto[] {
  const byName = new Map(files.map((f) => [f.name, f]));
  const ordered: FileDescriptorProto[] = [];
  const placed = new Set<string>();
  const place = (file: FileDescriptorProto) => {
    if (placed.has(file.name)) return;
    placed.add(file.name);
    for (const dep of file.dependency) {
      const imported = byName.get(dep);
      if (imported) place(imported);
    }
    ordered.push(file);
  };
  files.forEach(place);
  return ordered;
}

/**
 * Calls `Service/Method` the way `grpcurl -plaintext -d @ ADDRESS Service/Method` does: the method
 * and its message types come from the server's reflection only (no proto file), the requests are
 * JSON, sent in order, then the client half-closes; resolves when the server ends the call.
 */
export async function reflectedCall(
  address: string,
  method: string,
  requests: JsonValue[],
): Promise<ReflectedCallResult> {
  const [serviceName, methodName] = method.split("/") as [string, string];
  const services = await listServices(address);
  if (!services.includes(serviceName)) {
    throw new Error(`target server does not expose service "${serviceName}"`);
  }
  // Error details travel as google.protobuf.Any; like grpcurl, resolve their types by reflection.
  const files = new Map<string, FileDescriptorProto>();
  for (const symbol of [serviceName, "google.rpc.BadRequest"]) {
    for (const bytes of await reflectionFiles(address, symbol)) {
      const file = fromBinary(FileDescriptorProtoSchema, bytes);
      files.set(file.name, file);
    }
  }
  const registry: FileRegistry = createFileRegistry(
    create(FileDescriptorSetSchema, { file: importsFirst([...files.values()]) }),
  );
  const service = registry.getService(serviceName);
  const desc = service?.methods.find((m) => m.name === methodName);
  if (!desc) throw new Error(`service "${serviceName}" has no method "${methodName}"`);
  const serialize = (input: DescMessage) => (value: JsonValue) =>
    Buffer.from(toBinary(input, fromJson(input, value, { registry })));
  const deserialize = (output: DescMessage) => (bytes: Buffer) =>
    toJson(output, fromBinary(output, bytes), { registry });

  const client = new Client(address, credentials.createInsecure());
  const path = `/${serviceName}/${methodName}`;
  try {
    return await new Promise<ReflectedCallResult>((resolve) => {
      const responses: JsonValue[] = [];
      const done = (err: ServiceError | null) =>
        resolve({
          responses,
          code: err ? err.code : status.OK,
          details: err ? err.details : "",
        });
      if (desc.methodKind === "unary") {
        client.makeUnaryRequest(
          path,
          serialize(desc.input),
          deserialize(desc.output),
          requests[0] ?? {},
          new Metadata(),
          (err, value) => {
            if (value !== undefined) responses.push(value);
            done(err);
          },
        );
        return;
      }
      const call = client.makeBidiStreamRequest(
        path,
        serialize(desc.input),
        deserialize(desc.output),
        new Metadata(),
      );
      call.on("data", (value: JsonValue) => responses.push(value));
      call.on("error", (err: ServiceError) => done(err));
      call.on("status", (s: { code: status }) => {
        if (s.code === status.OK) done(null);
      });
      for (const request of requests) call.write(request);
      call.end();
    });
  } finally {
    client.close();
  }
}

export { redactDatabaseUrl } from "./database-url.js";
export { DatabaseOpenError, SchemaTooNewError } from "./errors.js";
export {
  createPostgresStore,
  PostgresStore,
  type PostgresStoreOptions,
  WRITER_SUFFIX,
} from "./postgres-store.js";
export { SCHEMA_VERSION } from "./schema.js";
export type { Transaction, TransactionGuard } from "./writer.js";

import { z } from "zod";
import { duration } from "./duration.js";

/** `postgres://…` or `postgresql://…`, checked without repeating the URL (it may hold a password). */
const postgresUrl = z
  .string()
  .refine((url) => /^postgres(ql)?:\/\/\S+$/i.test(url) && canParse(url), {
    error:
      "expected a PostgreSQL URL such as postgres://user:password@host:5432/parkway (postgres:// or postgresql://)",
  });

function canParse(url: string): boolean {
  try {
    new URL(url);
    return true;
  } catch {
    return false;
  }
}

/**
 * Where Parkway keeps its data when it is not the embedded LevelDB under `data`: a PostgreSQL
 * database, which several nodes may share. Unset: LevelDB.
 */
export const databaseConfigSchema = z.strictObject({
  /** `postgres://user:password@host:port/database`; the password is never logged. */
  url: postgresUrl.optional(),
  /** Connections to the database at most: one writes, the others read. */
  poolSize: z.number().int().min(2).max(100).default(4),
  /**
   * How long a node's hold on a session lasts without renewal (renewed every third of it): after
   * a node dies, another takes its sessions over within this time. Shorter takes over sooner;
   * longer tolerates longer pauses (GC, a slow database) before a live node loses a session.
   */
  leaseTimeout: duration({ min: 300, max: 600_000, text: ["300ms", "10m"] }).default(5_000),
  /**
   * This node's name in the session leases: stable across its restarts and unique among the nodes
   * (a host or pod name). A node restarted under the same name takes back at once the sessions it
   * served; unset, each start has a name of its own and waits out its old leases.
   */
  nodeId: z
    .string()
    .regex(/^[A-Za-z0-9._:-]{1,100}$/, "expected 1 to 100 letters, digits, '.', '_', ':' and '-'")
    .optional(),
});
export type DatabaseConfig = z.infer<typeof databaseConfigSchema>;
export const DATABASE_CONFIG_DEFAULT: DatabaseConfig = { poolSize: 4, leaseTimeout: 5_000 };

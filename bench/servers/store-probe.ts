/**
 * Child process: the bare-store baseline for memory. Opens a data directory with classic-level
 * alone (no Parkway, the store's LevelDB tuning), reads the given sessions' records (session, reply, first message) the way a
 * resume reads them, and reports its memory after GC.
 */
import { ClassicLevel } from "classic-level";
import { LEVEL_TUNING } from "../../src/store/level-tuning.js";
import { measureMemory, serveIpc } from "../lib/child.js";

const { dir } = JSON.parse(process.argv[2] ?? "{}") as { dir: string };
const db = new ClassicLevel<string, string>(dir, { keyEncoding: "utf8", valueEncoding: "utf8" });
await db.open(LEVEL_TUNING); // as the store opens it
const sub = (kind: string) => db.sublevel(kind, { keyEncoding: "utf8", valueEncoding: "utf8" });

serveIpc(
  {},
  {
    async read(arg) {
      const ids = arg as string[];
      let found = 0;
      for (const id of ids) {
        const values = [
          await sub("session").get(id),
          await sub("reply").get(id),
          await sub("message").get(`${id}/00000000`),
        ];
        if (values.every((v) => v !== undefined)) found++;
      }
      return { found, memory: await measureMemory() };
    },
    close: () => db.close(),
  },
);

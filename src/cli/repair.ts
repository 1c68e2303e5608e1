import path from "node:path";
import { loadConfig } from "../config/index.js";
import { checkSessions } from "../session/check-sessions.js";
import { reindexRuleIds } from "../session/rule-ids.js";
import { repairStore } from "../store/level-repair.js";
import { redactDatabaseUrl } from "../store/postgres/database-url.js";

/** Exit code of `parkway repair` when sessions answer DATA_LOSS after the repair. */
export const EXIT_SESSIONS_LOST = 3;

/** `parkway repair`: repairs the store, then checks and lists the sessions that lost data. */
export async function repair(flags: { data?: string; config?: string }): Promise<number> {
  const config = await loadConfig({ data: flags.data, config: flags.config });
  if (config.database.url !== undefined && flags.data === undefined) {
    process.stderr.write(
      `parkway: repair mends a LevelDB data directory; this configuration keeps its data in the PostgreSQL database ${redactDatabaseUrl(config.database.url)}, which recovers by itself on start (pass --data DIR to repair a LevelDB directory)\n`,
    );
    return 2;
  }
  const location = path.resolve(config.data);
  const out = (line: string) => process.stdout.write(`${line}\n`);
  out(`repairing ${location}: records in a damaged log or table are lost`);
  const { store, report } = await repairStore(location);
  try {
    if (report.damaged)
      out(`damage found on open: ${report.damaged.file}: ${report.damaged.problem}`);
    for (const file of report.lostFiles) out(`unreadable, moved aside: lost/${file}`);
    for (const line of report.dropped) out(`LevelDB: ${line}`);
    if (report.lostWrites > 0) out(`writes lost: ${report.lostWrites}`);
    if (report.markerDamaged !== undefined) {
      out(
        `parkway-store.json ${report.markerDamaged}: rewritten from the store; writes lost before cannot be counted, so replies parked or running may have been answered in one`,
      );
    }
    const check = await checkSessions(store, report.lossy);
    if (report.lossy) await reindexRuleIds(store);
    out(`sessions checked: ${check.checked}; answering DATA_LOSS: ${check.damaged.length}`);
    for (const { sessionId, problem } of check.damaged) out(`  ${sessionId}: ${problem}`);
    if (check.missing.length > 0) {
      out(`sessions listed but gone: ${check.missing.length} (${check.missing.join(", ")})`);
    }
    out(report.lossy ? "repaired; some records were lost" : "repaired; nothing was lost");
    return check.damaged.length > 0 ? EXIT_SESSIONS_LOST : 0;
  } finally {
    await store.close();
  }
}

import { FILE_CONTENT_READERS } from "./file-content-readers.js";
import { FILE_SYSTEM_READERS } from "./file-system-readers.js";
import type { ReaderSpec } from "./reader-spec.js";
import { SEARCH_READERS } from "./search-readers.js";
import { TEXT_AND_SYSTEM_READERS } from "./text-and-system-readers.js";

/**
 * The programs that only read unless an option says otherwise, as data. Each lists every option
 * the check accepts (GNU spelling; abbreviations of long options are resolved against the whole
 * list) and, under `effects`, the options that disqualify it or whose value is a file it reads.
 * An option not listed disqualifies the call. git, find and sed have their own files; the others
 * are grouped by what they read: file-system-readers, file-content-readers, search-readers, and
 * text-and-system-readers for programs whose words are text or that report on the system.
 */

/** The read-only programs outside git, find and sed. */
export const READER_PROGRAMS: Record<string, ReaderSpec> = {
  ...TEXT_AND_SYSTEM_READERS,
  ...FILE_SYSTEM_READERS,
  ...FILE_CONTENT_READERS,
  ...SEARCH_READERS,
};

import type { FileHandle } from "node:fs/promises";

/** Lines `offset …` of a file, read without loading more of it than the window needs. */
export interface LineWindow {
  /** The lines of the window, without line terminators; over-long lines are cut with a marker. */
  lines: string[];
  /** Whether the file continues after the window. */
  more: boolean;
  /** The file's number of lines, known when it was read to the end. */
  totalLines: number | undefined;
  /** The file looks binary: a NUL byte in its first 8000 bytes (as git decides). */
  binary: boolean;
  /** Reading stopped at `maxScanBytes` before the window was complete. */
  scanStopped: boolean;
}

export interface LineWindowOptions {
  /** First line to return, counted from 1. */
  offset: number;
  /** Most lines to return. */
  limit: number;
  /** Lines longer than this many characters are cut. */
  maxLineChars: number;
  /** The file's size in bytes. */
  size: number;
  /** Most bytes read from the start of the file to find the window (a huge file stays cheap). */
  maxScanBytes: number;
  signal: AbortSignal;
}

const CHUNK_BYTES = 64 * 1024;
const BINARY_PROBE_BYTES = 8000;
const LF = 0x0a;

/**
 * Reads the window of lines from the start of `file`, chunk by chunk, and stops as soon as the
 * window is complete, so a window near the start of a huge file costs only what it shows. A line
 * ends at "\n"; a trailing "\r" is dropped; a last line without "\n" counts. Memory is bounded by
 * the window: at most `maxLineChars` characters are kept per line; time by `maxScanBytes`, where
 * reading stops (`scanStopped`) with the lines found so far. Rejects with the signal's reason when
 * aborted.
 */
export async function readLineWindow(
  file: FileHandle,
  options: LineWindowOptions,
): Promise<LineWindow> {
  const { offset, limit, maxLineChars, size, maxScanBytes, signal } = options;
  const maxLineBytes = maxLineChars * 4 + 4;
  const endLine = offset + limit;
  const buf = Buffer.allocUnsafe(CHUNK_BYTES);
  const lines: string[] = [];
  let lineNo = 1;
  let parts: Buffer[] = [];
  let partBytes = 0;
  let lineCut = false;
  let lineHasBytes = false;
  let position = 0;

  const finishLine = () => {
    lines.push(decodeLine(parts, lineCut, maxLineChars));
    parts = [];
    partBytes = 0;
    lineCut = false;
  };

  for (;;) {
    signal.throwIfAborted();
    const { bytesRead } = await file.read(buf, 0, CHUNK_BYTES, position);
    if (bytesRead === 0) break;
    const data = buf.subarray(0, bytesRead);
    if (position === 0 && data.subarray(0, BINARY_PROBE_BYTES).includes(0)) {
      return { lines: [], more: false, totalLines: undefined, binary: true, scanStopped: false };
    }
    let start = 0;
    for (;;) {
      const nl = data.indexOf(LF, start);
      const stop = nl === -1 ? data.length : nl;
      if (stop > start) lineHasBytes = true;
      if (lineNo >= offset && !lineCut) {
        const room = maxLineBytes - partBytes;
        const piece = data.subarray(start, Math.min(stop, start + room));
        parts.push(Buffer.from(piece));
        partBytes += piece.length;
        if (stop - start > room) lineCut = true;
      }
      if (nl === -1) break;
      if (lineNo >= offset) finishLine();
      lineNo++;
      lineHasBytes = false;
      start = nl + 1;
      if (lineNo >= endLine) {
        const more = position + start < size;
        return { lines, more, totalLines: undefined, binary: false, scanStopped: false };
      }
    }
    position += bytesRead;
    if (position >= maxScanBytes && position < size) {
      if (lineNo >= offset && parts.length > 0) finishLine();
      return { lines, more: true, totalLines: undefined, binary: false, scanStopped: true };
    }
  }
  if (lineHasBytes && lineNo >= offset) finishLine();
  const totalLines = lineHasBytes ? lineNo : lineNo - 1;
  return { lines, more: false, totalLines, binary: false, scanStopped: false };
}

function decodeLine(parts: Buffer[], cut: boolean, maxLineChars: number): string {
  let line = Buffer.concat(parts).toString("utf8");
  if (line.endsWith("\r")) line = line.slice(0, -1);
  if (cut || line.length > maxLineChars) return `${line.slice(0, maxLineChars)}… [line truncated]`;
  return line;
}

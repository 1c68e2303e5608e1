/**
 * The submodules a repository's index holds. `git status` and `git diff` run git in every
 * checked-out submodule the index names (a gitlink, mode 160000), with that repository's own
 * settings, whether or not `.gitmodules` lists it: an embedded repository added with `git add`
 * counts too. The index is git's binary file (`.git/index`), read here only as far as its entries'
 * modes and paths, in versions 2 to 4 and for both object formats (SHA-1, SHA-256).
 */

/** What reading an index found: the gitlinks' paths, and the shared index a split index names. */
export type GitIndexRead =
  { ok: true; gitlinks: string[]; sharedIndex?: string } | { ok: false; reason: string };

const GITLINK = 0o160000;
const FILE_TYPE = 0o170000;
/** An entry's fixed part before its object id: ctime, mtime, dev, ino, mode, uid, gid, size. */
const STAT_BYTES = 40;
const EXTENDED = 0x4000;
const NAME_LENGTH = 0x0fff;

const fail = (reason: string): GitIndexRead => ({ ok: false, reason });

/** git's variable-length integer of index version 4 (each continuation adds one before shifting). */
function varint(bytes: Uint8Array, at: number): { value: number; next: number } | undefined {
  let c = bytes[at++];
  if (c === undefined) return undefined;
  let value = c & 127;
  while (c & 128) {
    c = bytes[at++];
    if (c === undefined || value > 0xffff) return undefined;
    value = ((value + 1) << 7) | (c & 127);
  }
  return { value, next: at };
}

/**
 * The gitlinks of the index in `bytes`, whose object ids are `idBytes` long (20 for SHA-1, 32 for
 * SHA-256), or why it cannot be read. The entries and extensions must fill the file up to its
 * trailing checksum exactly, or it is taken as unreadable.
 */
export function readGitIndex(bytes: Uint8Array, idBytes: 20 | 32): GitIndexRead {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const text = new TextDecoder("utf-8", { fatal: true });
  const end = bytes.length - idBytes;
  if (end < 12 || Buffer.from(bytes.subarray(0, 4)).toString("latin1") !== "DIRC") {
    return fail("not a git index");
  }
  const version = view.getUint32(4);
  if (version < 2 || version > 4) return fail(`index version ${version} is not known`);
  const count = view.getUint32(8);
  const gitlinks: string[] = [];
  let previous: Uint8Array = new Uint8Array(0);
  let at = 12;
  for (let i = 0; i < count; i++) {
    const start = at;
    if (at + STAT_BYTES + idBytes + 2 > end) return fail("its entries are cut short");
    const mode = view.getUint32(at + 24);
    at += STAT_BYTES + idBytes;
    const flags = view.getUint16(at);
    at += 2;
    if (flags & EXTENDED) {
      if (version < 3) return fail("an entry of version 2 has extended flags");
      at += 2;
    }
    let path: Uint8Array;
    if (version === 4) {
      const strip = varint(bytes, at);
      if (strip === undefined || strip.value > previous.length) return fail("a path is malformed");
      const nul = bytes.indexOf(0, strip.next);
      if (nul < 0 || nul >= end) return fail("a path is not terminated");
      path = Buffer.concat([
        previous.subarray(0, previous.length - strip.value),
        bytes.subarray(strip.next, nul),
      ]);
      at = nul + 1;
    } else {
      const nul = bytes.indexOf(0, at);
      if (nul < 0 || nul >= end) return fail("a path is not terminated");
      path = bytes.subarray(at, nul);
      // The entry is padded with 1 to 8 NULs to a multiple of 8 bytes.
      at = start + ((at - start + path.length + 8) & ~7);
    }
    const length = flags & NAME_LENGTH;
    if (length < NAME_LENGTH && length !== path.length) return fail("a path's length is wrong");
    if ((mode & FILE_TYPE) === GITLINK) {
      try {
        gitlinks.push(text.decode(path));
      } catch {
        return fail("a submodule's path is not UTF-8");
      }
    }
    previous = path;
  }
  let sharedIndex: string | undefined;
  while (at < end) {
    if (at + 8 > end) return fail("an extension is cut short");
    const signature = Buffer.from(bytes.subarray(at, at + 4)).toString("latin1");
    const size = view.getUint32(at + 4);
    at += 8;
    if (at + size > end) return fail(`its ${signature} extension is cut short`);
    if (signature === "link") {
      if (size < idBytes) return fail("its link extension is cut short");
      sharedIndex = Buffer.from(bytes.subarray(at, at + idBytes)).toString("hex");
    }
    at += size;
  }
  return { ok: true, gitlinks, ...(sharedIndex === undefined ? {} : { sharedIndex }) };
}

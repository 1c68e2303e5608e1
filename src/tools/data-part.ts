import { z } from "zod";

/**
 * Data a tool result carries besides its text: inline bytes (base64) or a URL, with its media type.
 * A model can be handed two kinds: images (PNG, JPEG, GIF, WebP), inline or by an http(s) URL, and
 * text documents (text/*, JSON, XML, YAML, and the +json / +xml types), inline, as UTF-8 text.
 */
export const dataPartSchema = z.object({
  mediaType: z.string(),
  /** The bytes, base64. */
  base64: z.string().optional(),
  /** Where the bytes are (images only). */
  url: z.string().optional(),
});
export type DataPart = z.infer<typeof dataPartSchema>;

const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);
const TEXT_TYPES = new Set([
  "application/json",
  "application/xml",
  "application/yaml",
  "application/x-yaml",
  "application/toml",
  "application/javascript",
]);

/** The media type without parameters, lower case: `Application/JSON; charset=utf-8` → `application/json`. */
export function essence(mediaType: string): string {
  return mediaType.split(";")[0]!.trim().toLowerCase();
}

/** True for an image the model can see. */
export function isImage(part: DataPart): boolean {
  return IMAGE_TYPES.has(essence(part.mediaType));
}

/** True for a text document the model reads as text. */
export function isTextDocument(mediaType: string): boolean {
  const type = essence(mediaType);
  return (
    type.startsWith("text/") ||
    TEXT_TYPES.has(type) ||
    type.endsWith("+json") ||
    type.endsWith("+xml")
  );
}

/** What is wrong with a data block, and in which of its fields. */
export interface DataPartProblem {
  field: "media_type" | "url" | "data";
  description: string;
}

/**
 * Why data of `mediaType` from `source` (inline bytes or a URL) cannot be handed to a model, or
 * undefined when it can.
 */
export function dataPartProblem(
  mediaType: string,
  source: { bytes?: Uint8Array; url?: string },
): DataPartProblem | undefined {
  const type = essence(mediaType);
  if (!/^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(type)) {
    const description = `is ${JSON.stringify(mediaType)}, not a media type such as "image/png" or "application/json"`;
    return { field: "media_type", description };
  }
  const image = IMAGE_TYPES.has(type);
  if (!image && !isTextDocument(type)) {
    const description = `${type} cannot be handed to the model: send an image (PNG, JPEG, GIF, WebP) or a text document (text/*, JSON, XML, YAML)`;
    return { field: "media_type", description };
  }
  if (source.url !== undefined) {
    if (!image)
      return { field: "url", description: `only an image may be given by URL, not ${type}` };
    if (!/^https?:\/\/\S+$/i.test(source.url)) {
      return { field: "url", description: "must be an http or https URL" };
    }
    return undefined;
  }
  if (source.bytes === undefined) return { field: "data", description: "is required (or a url)" };
  if (!image) {
    try {
      new TextDecoder("utf-8", { fatal: true }).decode(source.bytes);
    } catch {
      return { field: "data", description: `must be UTF-8 text for ${type}` };
    }
  }
  return undefined;
}

/** The text of a text document part. */
export function dataPartText(part: DataPart): string {
  return Buffer.from(part.base64 ?? "", "base64").toString("utf8");
}

/** What the model is shown for an image: its URL, or a data: URL of its bytes. */
export function imageUrl(part: DataPart): string {
  return part.url ?? `data:${essence(part.mediaType)};base64,${part.base64 ?? ""}`;
}

/** An uploaded file as services receive it: read, size-checked and sniffed by src/http/uploads.ts. */
export interface Upload {
  bytes: Buffer;
  /** Sniffed from the content; the client's Content-Type is never trusted. */
  mimeType: string;
  /** Extension matching the sniffed type, without the dot. */
  ext: string;
  /** The client's file name, sanitized (no path, tags or control characters), or null. */
  fileName: string | null;
  /** Text fields sent beside the file (first value of each); callers validate them with zod. */
  fields: Record<string, string>;
}

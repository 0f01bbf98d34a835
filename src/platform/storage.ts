import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { copyFile, mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { normalizePath } from './text.js';

/** An object found in storage: its size, and its bytes on demand (`end` inclusive, as in HTTP ranges). */
export interface StoredFile {
  sizeBytes: number;
  read(range?: { start: number; end: number }): Readable;
}

/** Where uploaded bytes live. Local disk by default; an S3-compatible store can implement the same interface. */
export interface Storage {
  put(key: string, bytes: Buffer): Promise<void>;
  /** Stores the content of a local file (an upload's temporary file) without reading it into memory. */
  putFile(key: string, sourcePath: string): Promise<void>;
  /** null when the object does not exist; the bytes are read only when `read` is called (whole, or one range). */
  open(key: string): Promise<StoredFile | null>;
  remove(key: string): Promise<void>;
}

export class LocalDiskStorage implements Storage {
  private readonly root: string;
  constructor(root: string) {
    this.root = resolve(root);
  }
  private pathOf(key: string) {
    const clean = normalizePath(key);
    if (!clean) throw new Error('empty storage key');
    return join(this.root, clean);
  }
  async put(key: string, bytes: Buffer) {
    const path = this.pathOf(key);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, bytes);
  }
  /** Copied under a temporary name, then renamed: a reader never sees a half-written object. */
  async putFile(key: string, sourcePath: string) {
    const path = this.pathOf(key);
    await mkdir(dirname(path), { recursive: true });
    const partial = `${path}.${randomUUID()}.partial`;
    try {
      await copyFile(sourcePath, partial);
      await rename(partial, path);
    } catch (error) {
      await rm(partial, { force: true }).catch(() => undefined);
      throw error;
    }
  }
  async open(key: string) {
    const path = this.pathOf(key);
    try {
      const info = await stat(path);
      return { sizeBytes: info.size, read: (range?: { start: number; end: number }) => createReadStream(path, range ?? {}) };
    } catch {
      return null;
    }
  }
  async remove(key: string) {
    await rm(this.pathOf(key), { force: true });
  }
}

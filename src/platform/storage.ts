import { createReadStream } from 'node:fs';
import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { normalizePath } from './text.js';

/** Where uploaded bytes live. Local disk by default; an S3-compatible store can implement the same interface. */
export interface Storage {
  put(key: string, bytes: Buffer): Promise<void>;
  /** null when the object does not exist. */
  open(key: string): Promise<{ stream: Readable; sizeBytes: number } | null>;
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
  async open(key: string) {
    const path = this.pathOf(key);
    try {
      const info = await stat(path);
      return { stream: createReadStream(path), sizeBytes: info.size };
    } catch {
      return null;
    }
  }
  async remove(key: string) {
    await rm(this.pathOf(key), { force: true });
  }
}

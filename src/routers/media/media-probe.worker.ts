/*
 * Runs in a worker thread (src/routers/media/media-probe.ts starts it): parses an untrusted audio or video file
 * with music-metadata, away from the event loop of the API, under a time and a memory limit. Self-contained on
 * purpose (no relative imports), so it loads the same under tsx, vitest and Node's own type stripping.
 */
import { createReadStream } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { parseStream } from 'music-metadata';

interface ProbeInput {
  path: string;
  mimeType: string;
  sizeBytes: number;
}

/**
 * Duration in seconds (millisecond precision), read from the container: the format's duration, else the longest
 * track (MP4 and MOV give durations per track only when they carry no audio). Null when the file does not tell.
 */
async function durationOf(input: ProbeInput): Promise<number | null> {
  const stream = createReadStream(input.path);
  try {
    const { format } = await parseStream(stream, { mimeType: input.mimeType, size: input.sizeBytes }, { duration: true, skipCovers: true });
    const candidates = [format.duration, ...format.trackInfo.map((t) => t.duration)].filter(
      (d): d is number => typeof d === 'number' && Number.isFinite(d) && d > 0,
    );
    const seconds = format.duration && Number.isFinite(format.duration) && format.duration > 0 ? format.duration : Math.max(0, ...candidates);
    return seconds > 0 ? Math.round(seconds * 1000) / 1000 : null;
  } catch {
    return null;
  } finally {
    stream.destroy();
  }
}

parentPort?.postMessage({ durationSeconds: await durationOf(workerData as ProbeInput) });

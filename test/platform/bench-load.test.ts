import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { drive, inTurn, loadFigures, type LoadSample } from '../../bench/load.js';

// The bench's measuring helpers: the order of the turns, how slices merge, and that a latency keeps its fractions.
describe('bench load helpers', () => {
  it('takes two loads in turns, the first one first every other round', async () => {
    const order: string[] = [];
    const load = (name: string) => async () => {
      order.push(name);
      return `${name}${order.length}`;
    };
    const [a, b] = await inTurn(5, [load('A'), load('B')]);
    expect(order).toEqual(['A', 'B', 'B', 'A', 'A', 'B', 'B', 'A', 'A', 'B']);
    expect(a).toEqual(['A1', 'A4', 'A5', 'A8', 'A9']);
    expect(b).toEqual(['B2', 'B3', 'B6', 'B7', 'B10']);
  });

  it('merges slices: requests over the summed time, percentiles of every answer, failures and header counts added', () => {
    const slice = (latenciesMs: number[], durationSeconds: number, statusCodes: Record<string, number>, errors = 0): LoadSample => ({
      durationSeconds,
      latenciesMs,
      statusCodes,
      errors,
      headerCounts: { HIT: latenciesMs.length },
    });
    const figures = loadFigures([slice([10.9, 10.2, 3.25], 2, { 200: 3 }), slice([10.6, 1.5], 2, { 200: 1, 404: 1 }, 1)]);
    expect(figures).toEqual({
      requests: 5,
      reqPerSec: 1.25,
      // Nearest rank of 1.5, 3.25, 10.2, 10.6, 10.9: a whole-millisecond histogram would say 10 and 10.
      p50Ms: 10.2,
      p99Ms: 10.9,
      failures: 2,
      statusCodes: { 200: 4, 404: 1 },
      headerCounts: { HIT: 5 },
    });
    expect(loadFigures([]).reqPerSec).toBe(0);
  });

  describe('drive', () => {
    const server = createServer((_request, response) => response.end('{}'));
    let url = '';
    beforeAll(async () => {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('keeps the latency of every answer, in fractions of a millisecond, and goes on through the rotation', async () => {
      const rotation = { next: 0 };
      const sample = await drive({ baseUrl: url, paths: ['/a', '/b'], connections: 2, durationSeconds: 0.3, rotation });
      const answered = sample.statusCodes['200'] ?? 0;
      expect(answered).toBeGreaterThan(0);
      expect(sample.latenciesMs).toHaveLength(answered);
      expect(sample.latenciesMs.some((ms) => !Number.isInteger(ms))).toBe(true);
      expect(rotation.next).toBeGreaterThanOrEqual(answered);
      expect(sample.errors).toBe(0);
    });
  });
});

import { describe, expect, it } from 'vitest';
import { isUuid, newId, zId } from '../../src/platform/ids.js';

describe('isUuid', () => {
  it('accepts exactly what the zId schema accepts', () => {
    const values: unknown[] = [
      newId(),
      '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
      '00000000-0000-0000-0000-000000000000',
      'ffffffff-ffff-ffff-ffff-ffffffffffff',
      '0190A1B2-C3D4-7E5F-8A9B-0C1D2E3F4A5B',
      '0190a1b2-c3d4-9e5f-8a9b-0c1d2e3f4a5b',
      '0190a1b2-c3d4-7e5f-ca9b-0c1d2e3f4a5b',
      '0190a1b2c3d47e5f8a9b0c1d2e3f4a5b',
      ` ${newId()}`,
      `${newId()}\n`,
      '',
      'not-a-uuid',
      42,
      null,
      undefined,
      { id: newId() },
    ];
    for (const value of values) expect([value, isUuid(value)]).toEqual([value, zId.safeParse(value).success]);
  });
});

describe('zId', () => {
  it('reads a UUID in lower case (the same id in either case, as PostgreSQL answers it)', () => {
    const id = newId();
    expect(zId.parse(id.toUpperCase())).toBe(id);
    expect(zId.parse(id)).toBe(id);
  });
});

import type { TestApp } from '../setup/test-app.js';

let seq = 0;

/** A unique identity for POST /api/v1/auth/social (foreign document, so no CPF collisions between tests). */
export function newIdentity(overrides: Record<string, unknown> = {}) {
  const n = `${Date.now()}-${++seq}`;
  return { authProvider: 'google', externalId: `ext-${n}`, displayName: `Person ${n}`, foreignDocument: `P${n}`, ...overrides };
}

export const socialLogin = (t: TestApp, body: Record<string, unknown>) => t.app.inject({ method: 'POST', url: '/api/v1/auth/social', payload: body });

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** Valid CPFs (check digits computed), distinct per call. */
export function newCpf(): string {
  const base = String(100_000_000 + Math.floor(Math.random() * 899_999_999)).slice(0, 9);
  const digit = (digits: string, length: number) => {
    let sum = 0;
    for (let i = 0; i < length; i++) sum += Number(digits[i]) * (length + 1 - i);
    const rest = (sum * 10) % 11;
    return rest === 10 ? 0 : rest;
  };
  const withFirst = base + digit(base, 9);
  return withFirst + digit(withFirst, 10);
}

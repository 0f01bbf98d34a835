import { z } from 'zod';
import { zNumeric } from './numeric.js';

/**
 * The deepest offset a list serves (10 million rows). Offsets are bound as PostgreSQL integers, so without an upper
 * bound a huge `skip` or `pageNumber` would fail in the database instead of being a 400.
 */
export const MAX_OFFSET = 10_000_000;

/** The page size (and `take`) when none is asked. */
export const DEFAULT_PAGE_SIZE = 20;

/** `/paged` input: 1-based page, 1..100 items; out of range is a 400, never silently clamped. */
export const pageInput = {
  pageNumber: zNumeric(
    z
      .number()
      .int()
      .min(1)
      .max(MAX_OFFSET / 100),
    1,
  ),
  pageSize: zNumeric(z.number().int().min(1).max(100), DEFAULT_PAGE_SIZE),
};

/** Plain list input (`skip`/`take`). */
export const skipTakeInput = (defaultTake = DEFAULT_PAGE_SIZE) => ({
  skip: zNumeric(z.number().int().min(0).max(MAX_OFFSET), 0),
  take: zNumeric(z.number().int().min(1).max(100), defaultTake),
});

export const pagedOutput = <T extends z.ZodType>(item: T) =>
  z.object({
    items: z.array(item),
    pageNumber: z.number().int(),
    pageSize: z.number().int(),
    totalCount: z.number().int(),
    totalPages: z.number().int(),
    hasPreviousPage: z.boolean(),
    hasNextPage: z.boolean(),
  });

export function toPage<T>(items: T[], totalCount: number, pageNumber: number, pageSize: number) {
  const totalPages = Math.ceil(totalCount / pageSize);
  return {
    items,
    pageNumber,
    pageSize,
    totalCount,
    totalPages,
    hasPreviousPage: pageNumber > 1,
    hasNextPage: pageNumber < totalPages,
  };
}

export const pageOffset = (pageNumber: number, pageSize: number) => ({ offset: (pageNumber - 1) * pageSize, limit: pageSize });

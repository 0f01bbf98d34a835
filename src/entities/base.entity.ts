import { p } from '@mikro-orm/postgresql';
import { newId } from '../platform/ids.js';

/** Columns every table has: a time-ordered UUID and the creation time. */
export const baseProperties = {
  id: p
    .uuid()
    .primary()
    .onCreate(() => newId()),
  createdAtUtc: p.datetime().onCreate(() => new Date()),
};

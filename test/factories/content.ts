/**
 * Rows of community content written directly, for tests that need content to exist (or content in states that
 * clients cannot produce) without going through the services that create it; those services have their own tests.
 * Every option defaults to a plain, visible row.
 */
import { newId } from '../../src/platform/ids.js';
import type { TestApp } from '../setup/test-app.js';

export interface NewPost {
  territoryId: string;
  authorUserId: string;
  title?: string;
  content?: string;
  type?: string;
  visibility?: string;
  status?: string;
  mapEntityId?: string | null;
  createdAt?: Date;
}

export async function newPost(t: TestApp, post: NewPost): Promise<string> {
  const id = newId();
  await t.sql(
    `insert into post (id, created_at_utc, updated_at_utc, territory_id, author_user_id, title, content, type, visibility, status, map_entity_id)
     values ($1, $2, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [
      id,
      post.createdAt ?? new Date(),
      post.territoryId,
      post.authorUserId,
      post.title ?? `Post ${id.slice(-4)}`,
      post.content ?? 'content',
      post.type ?? 'POST',
      post.visibility ?? 'PUBLIC',
      post.status ?? 'PUBLISHED',
      post.mapEntityId ?? null,
    ],
  );
  return id;
}

export interface NewEvent {
  territoryId: string;
  createdByUserId: string;
  title?: string;
  startsAt?: Date;
  latitude?: number;
  longitude?: number;
  status?: string;
  createdByMembership?: 'VISITOR' | 'RESIDENT';
  createdAt?: Date;
}

export async function newEvent(t: TestApp, event: NewEvent): Promise<string> {
  const id = newId();
  await t.sql(
    `insert into event (id, created_at_utc, territory_id, title, starts_at_utc, latitude, longitude, status, created_by_user_id, created_by_membership)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [
      id,
      event.createdAt ?? new Date(),
      event.territoryId,
      event.title ?? `Event ${id.slice(-4)}`,
      event.startsAt ?? new Date(Date.now() + 86_400_000),
      event.latitude ?? -23.52,
      event.longitude ?? -46.62,
      event.status ?? 'SCHEDULED',
      event.createdByUserId,
      event.createdByMembership ?? 'RESIDENT',
    ],
  );
  return id;
}

export interface NewMapEntity {
  territoryId: string;
  createdByUserId: string;
  name?: string;
  category?: string;
  latitude?: number;
  longitude?: number;
  visibility?: string;
  status?: string;
  createdAt?: Date;
}

export async function newMapEntity(t: TestApp, entity: NewMapEntity): Promise<string> {
  const id = newId();
  await t.sql(
    `insert into map_entity (id, created_at_utc, updated_at_utc, territory_id, created_by_user_id, name, category, latitude, longitude, visibility, status, confirmation_count)
     values ($1, $2, $2, $3, $4, $5, $6, $7, $8, $9, $10, 0)`,
    [
      id,
      entity.createdAt ?? new Date(),
      entity.territoryId,
      entity.createdByUserId,
      entity.name ?? `Entity ${id.slice(-4)}`,
      entity.category ?? 'establishment',
      entity.latitude ?? -23.5,
      entity.longitude ?? -46.6,
      entity.visibility ?? 'PUBLIC',
      entity.status ?? 'SUGGESTED',
    ],
  );
  return id;
}

import { defineEntity, p } from '@mikro-orm/postgresql';
import { baseProperties, textArray } from './base.entity.js';

/** What a client application may do on the journeys API (v2): GET needs read, POST needs write. */
export const CLIENT_SCOPES = ['journeys:read', 'journeys:write'] as const;
export type ClientScope = (typeof CLIENT_SCOPES)[number];

/**
 * A client application of the journeys API (OAuth 2.0 client credentials). The secret is shown once and stored
 * only as a salted scrypt hash. Tokens carry the `secretVersion` they were issued under: a rotation ends them.
 */
export const ClientApplication = defineEntity({
  name: 'ClientApplication',
  tableName: 'client_application',
  properties: {
    ...baseProperties,
    clientId: p.string().length(64).unique(),
    secretHash: p.string().length(200).hidden(),
    name: p.string().length(200),
    description: p.string().length(2000).nullable(),
    scopes: textArray().$type<ClientScope[]>(),
    redirectUris: textArray().$type<string[]>().default([]),
    isActive: p.boolean().default(true),
    secretVersion: p.integer().default(1),
    createdByUserId: p.uuid().nullable(),
  },
});

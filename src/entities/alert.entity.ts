import { defineEntity, p } from '@mikro-orm/postgresql';
import { baseProperties, statementCounterTriggers } from './base.entity.js';
import { mapPinTriggers } from './map.entity.js';
import { Territory } from './territory.entity.js';
import { User } from './user.entity.js';

/** PENDING until a curator decides: VALIDATED publishes it, REJECTED (validated=false) hides it for good. */
export const ALERT_STATUSES = ['PENDING', 'VALIDATED', 'REJECTED'] as const;
export type AlertStatus = (typeof ALERT_STATUSES)[number];

/**
 * A health alert reported by a member of a territory with ALERTPOSTS enabled. `postId` is its ALERT feed post
 * (no foreign key: the post references the alert). Coordinates are optional: the map shows alerts that have them.
 */
export const Alert = defineEntity({
  name: 'Alert',
  tableName: 'alert',
  properties: {
    ...baseProperties,
    territoryId: () => p.manyToOne(Territory).mapToPk().fieldName('territory_id').deleteRule('cascade'),
    title: p.string().length(200),
    description: p.string().length(2000),
    latitude: p.double().$type<number>().nullable(),
    longitude: p.double().$type<number>().nullable(),
    status: p.string().length(20).$type<AlertStatus>().default('PENDING'),
    reportedByUserId: () => p.manyToOne(User).mapToPk().fieldName('reported_by_user_id').deleteRule('cascade'),
    postId: p.uuid().nullable(),
    decidedAtUtc: p.datetime().nullable(),
    decidedByUserId: p.uuid().nullable(),
  },
  // The list: a territory's VALIDATED alerts, newest first.
  indexes: [{ name: 'alert_validated_territory_idx', properties: ['territoryId', 'createdAtUtc', 'id'], where: "status = 'VALIDATED'" }],
  // Map pin counters, of the territory and by author (src/entities/map.entity.ts).
  triggers: [...mapPinTriggers('alert', 'alerts'), ...statementCounterTriggers('alert', 'map_pin_author_alert', 'alerts')],
});

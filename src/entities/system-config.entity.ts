import { defineEntity, p } from '@mikro-orm/postgresql';

/** Operator-tunable settings (`Area:Name` keys) read by the code at run time; seeded with defaults on start. */
export const SystemConfig = defineEntity({
  name: 'SystemConfig',
  tableName: 'system_config',
  properties: {
    key: p.string().length(200).primary(),
    value: p.text(),
    category: p.string().length(100).nullable(),
    description: p.string().length(1000).nullable(),
    createdAtUtc: p.datetime().onCreate(() => new Date()),
    updatedAtUtc: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
    updatedByUserId: p.uuid().nullable(),
  },
});

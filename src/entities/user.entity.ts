import { defineEntity, p } from '@mikro-orm/postgresql';
import { baseProperties } from './base.entity.js';

export const IDENTITY_STATUSES = ['Unverified', 'Pending', 'Verified', 'Rejected'] as const;
export type IdentityVerificationStatus = (typeof IDENTITY_STATUSES)[number];

export const SYSTEM_PERMISSIONS = ['SYSTEM_ADMIN', 'FINANCIAL_MANAGER'] as const;
export type SystemPermission = (typeof SYSTEM_PERMISSIONS)[number];

export const User = defineEntity({
  name: 'User',
  tableName: 'app_user',
  properties: {
    ...baseProperties,
    displayName: p.string().length(200),
    email: p.string().length(320).nullable(),
    authProvider: p.string().length(50),
    externalId: p.string().length(255),
    cpf: p.string().length(11).nullable().unique(),
    foreignDocument: p.string().length(100).nullable(),
    phoneNumber: p.string().length(30).nullable(),
    identityVerificationStatus: p.string().length(20).$type<IdentityVerificationStatus>().default('Unverified'),
    twoFactorEnabled: p.boolean().default(false),
    /** Active TOTP secret; never serialized. */
    twoFactorSecret: p.string().length(64).nullable().hidden(),
    /** Secret issued by setup, awaiting confirmation. */
    twoFactorPendingSecret: p.string().length(64).nullable().hidden(),
    /** Last accepted TOTP time step: a step is never accepted twice. */
    twoFactorLastStep: p.bigint('number').nullable().hidden(),
    deletedAtUtc: p.datetime().nullable(),
    /** Sign-out everywhere: access tokens issued before this second are refused. */
    tokensValidAfterUtc: p.datetime().nullable(),
  },
  uniques: [{ properties: ['authProvider', 'externalId'] }],
});

/** A system permission held by a user (SYSTEM_ADMIN, FINANCIAL_MANAGER). */
export const UserPermission = defineEntity({
  name: 'UserPermission',
  tableName: 'user_permission',
  properties: {
    ...baseProperties,
    userId: () => p.manyToOne(User).mapToPk().fieldName('user_id').deleteRule('cascade'),
    permission: p.string().length(40).$type<SystemPermission>(),
    grantedByUserId: p.uuid().nullable(),
  },
  uniques: [{ properties: ['userId', 'permission'] }],
});

// Every entity the ORM knows; migrations are generated from this list.
import { AuditEntry } from './audit.entity.js';
import { RecoveryCode, RefreshToken, TwoFactorChallenge } from './auth.entity.js';
import { Evidence } from './evidence.entity.js';
import { TerritoryMembership } from './membership.entity.js';
import { Territory, TerritorySelection } from './territory.entity.js';
import { User, UserPermission } from './user.entity.js';
import { WorkItem } from './work-item.entity.js';

export const entities = [
  User,
  UserPermission,
  RefreshToken,
  TwoFactorChallenge,
  RecoveryCode,
  Territory,
  TerritorySelection,
  TerritoryMembership,
  WorkItem,
  Evidence,
  AuditEntry,
];

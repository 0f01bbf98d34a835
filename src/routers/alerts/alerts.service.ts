import { type EntityManager, type InferEntity, LockMode } from '@mikro-orm/postgresql';
import { isoValue, runHotRead } from '../../db/sql.js';
import { Alert, type AlertStatus } from '../../entities/alert.entity.js';
import { audit } from '../../entities/audit.entity.js';
import { newId } from '../../platform/ids.js';
import { pageOffset, toPage } from '../../platform/pagination.js';
import { AppError, notFound } from '../../platform/problems.js';
import type { ServiceContext } from '../../platform/service-context.js';
import { requireTerritory } from '../../policy/territory-access.js';
import { createSystemPost, setPostStatus } from '../feed/feed.service.js';
import { residentsQuery } from '../memberships/memberships.queries.js';
import { enforceModerationRules } from '../moderation-rules/moderation-rules.service.js';
import { enqueueNotificationTo } from '../notifications/outbox.js';
import { type AlertFacts, validatedAlertsCountQuery, validatedAlertsQuery } from './alerts.queries.js';
import type { AlertOutput, ReportAlertInput } from './alerts.schemas.js';

type AlertEntity = InferEntity<typeof Alert>;

function toOutput(a: AlertEntity | AlertFacts): AlertOutput {
  return {
    id: a.id,
    territoryId: a.territoryId,
    title: a.title,
    description: a.description,
    latitude: a.latitude ?? null,
    longitude: a.longitude ?? null,
    status: a.status,
    reportedByUserId: a.reportedByUserId,
    postId: a.postId ?? null,
    createdAtUtc: isoValue(a.createdAtUtc)!,
    decidedAtUtc: isoValue(a.decidedAtUtc),
    decidedByUserId: a.decidedByUserId ?? null,
  };
}

/** Every alerts operation needs the territory's ALERTPOSTS flag (else 404 ALERTS_DISABLED, before the caller's role). */
const ALERTS = { flag: 'ALERTPOSTS' } as const;

/**
 * A member (VISITOR or RESIDENT) reports an alert in a territory with ALERTPOSTS enabled. The alert starts PENDING
 * with a PENDING (not visible) ALERT feed post, in one transaction; a posting-restricted member is refused (403).
 */
export async function reportAlert(ctx: ServiceContext, input: ReportAlertInput): Promise<AlertOutput> {
  const access = await requireTerritory(ctx, input.territoryId, {
    ...ALERTS,
    as: 'member',
    // The alert becomes an ALERT feed post: a posting restriction refuses it as it refuses any post.
    creates: true,
    denied: { message: 'Only members (visitors or residents) of this territory can report alerts.', code: 'NOT_MEMBER' },
  });
  const { em, user } = ctx;
  const { territoryId } = access;
  // The alert becomes an ALERT feed post: the community's content rules apply to it as to any post.
  await enforceModerationRules(em, territoryId, { title: input.title, content: input.description, type: 'ALERT' });

  return em.transactional(async (tx) => {
    const alert = tx.create(Alert, {
      id: newId(),
      territoryId,
      title: input.title,
      description: input.description,
      latitude: input.latitude ?? null,
      longitude: input.longitude ?? null,
      status: 'PENDING',
      reportedByUserId: user.id,
      postId: null,
      decidedAtUtc: null,
      decidedByUserId: null,
    });
    const post = await createSystemPost(tx, {
      territoryId,
      authorUserId: user.id,
      title: input.title,
      content: input.description,
      type: 'ALERT',
      visibility: 'PUBLIC',
      status: 'PENDING',
      alertId: alert.id,
    });
    alert.postId = post.id;
    audit(tx, { actorUserId: user.id, action: 'alert.reported', subjectType: 'Alert', subjectId: alert.id, territoryId });
    await tx.flush();
    return toOutput(alert);
  });
}

/** A territory's VALIDATED alerts, newest first; read on the pool, given the context, so a listing never forks its manager. */
export async function listAlerts(ctx: ServiceContext, input: { territoryId?: string; skip: number; take: number }) {
  const { territoryId } = await requireTerritory(ctx, input.territoryId, ALERTS);
  const rows = await runHotRead<AlertFacts>(ctx, validatedAlertsQuery(territoryId, input.skip, input.take));
  return rows.map(toOutput);
}

export async function pageAlerts(ctx: ServiceContext, input: { territoryId?: string; pageNumber: number; pageSize: number }) {
  const { territoryId } = await requireTerritory(ctx, input.territoryId, ALERTS);
  const { offset, limit } = pageOffset(input.pageNumber, input.pageSize);
  const [rows, count] = await Promise.all([
    runHotRead<AlertFacts>(ctx, validatedAlertsQuery(territoryId, offset, limit)),
    runHotRead<{ total: number }>(ctx, validatedAlertsCountQuery(territoryId)),
  ]);
  return toPage(rows.map(toOutput), count[0]?.total ?? 0, input.pageNumber, input.pageSize);
}

/** Publishes or rejects the alert's post; a post its author has deleted meanwhile is simply unlinked. */
async function setLinkedPostStatus(em: EntityManager, alert: AlertEntity, status: 'PUBLISHED' | 'REJECTED') {
  try {
    await setPostStatus(em, alert.postId!, status);
  } catch (error) {
    if (!(error instanceof AppError && error.code === 'NOT_FOUND')) throw error;
    alert.postId = null;
  }
}

/**
 * A curator's decision (CURATOR of the alert's territory or SYSTEM_ADMIN), repeatable: validated=true makes the
 * alert VALIDATED and publishes its post, notifying the residents the first time it becomes VALIDATED;
 * validated=false makes both REJECTED. Audited.
 */
export async function validateAlert(ctx: ServiceContext, input: { alertId: string; validated: boolean }): Promise<AlertOutput> {
  const { em, user } = ctx;
  const { alertId, validated } = input;
  const found = await em.findOne(Alert, { id: alertId });
  if (!found) throw notFound('Alert');
  await requireTerritory(ctx, found.territoryId, { ...ALERTS, status: 'ANY', as: 'CURATOR' });

  return em.transactional(async (tx) => {
    // Serializes concurrent decisions so "became VALIDATED" (and its notification) happens once.
    const alert = await tx.findOneOrFail(Alert, { id: alertId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    const previous = alert.status;
    const next: AlertStatus = validated ? 'VALIDATED' : 'REJECTED';
    alert.status = next;
    alert.decidedAtUtc = ctx.clock.now();
    alert.decidedByUserId = user.id;
    if (alert.postId) await setLinkedPostStatus(tx, alert, validated ? 'PUBLISHED' : 'REJECTED');
    if (next === 'VALIDATED' && previous !== 'VALIDATED') {
      await enqueueNotificationTo(tx, residentsQuery(alert.territoryId, user.id), {
        type: 'ALERT_VALIDATED',
        title: `Alert: ${alert.title}`,
        body: alert.description,
        data: { territoryId: alert.territoryId, alertId: alert.id, postId: alert.postId ?? null },
        sourceKey: `alert:${alert.id}:validated`,
      });
    }
    audit(tx, {
      actorUserId: user.id,
      action: validated ? 'alert.validated' : 'alert.rejected',
      subjectType: 'Alert',
      subjectId: alert.id,
      territoryId: alert.territoryId,
      data: { validated, previousStatus: previous, status: next },
    });
    await tx.flush();
    return toOutput(alert);
  });
}

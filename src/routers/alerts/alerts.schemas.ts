import { z } from 'zod';
import { ALERT_STATUSES } from '../../entities/alert.entity.js';
import { zLatitude, zLongitude } from '../../platform/geo.js';
import { zId } from '../../platform/ids.js';
import { pagedOutput, pageInput, skipTakeInput } from '../../platform/pagination.js';
import { zText } from '../../platform/text.js';

export const ALERT_TITLE_MAX = 200;
export const ALERT_DESCRIPTION_MAX = 2000;

export const alertOutput = z
  .object({
    id: z.uuid(),
    territoryId: z.uuid(),
    title: z.string(),
    description: z.string(),
    /** Where the alert applies, when the reporter gave it (the map shows such alerts as pins). */
    latitude: z.number().nullable(),
    longitude: z.number().nullable(),
    status: z.enum(ALERT_STATUSES),
    reportedByUserId: z.uuid(),
    /** The ALERT feed post, published when the alert is validated. */
    postId: z.uuid().nullable(),
    createdAtUtc: z.iso.datetime(),
    decidedAtUtc: z.iso.datetime().nullable(),
    decidedByUserId: z.uuid().nullable(),
  })
  .meta({ id: 'Alert' });
export type AlertOutput = z.infer<typeof alertOutput>;

export const alertPage = pagedOutput(alertOutput).meta({ id: 'AlertPage' });

export const reportAlertInput = z
  .object({
    /** Optional when the X-Session-Id session has a selected territory. */
    territoryId: zId.nullish(),
    title: zText({ max: ALERT_TITLE_MAX }),
    description: zText({ max: ALERT_DESCRIPTION_MAX }),
    latitude: zLatitude.nullish(),
    longitude: zLongitude.nullish(),
  })
  .refine((v) => (v.latitude == null) === (v.longitude == null), {
    path: ['longitude'],
    message: 'latitude and longitude go together: give both or neither',
  });
export type ReportAlertInput = z.infer<typeof reportAlertInput>;

const territoryFilter = { territoryId: zId.optional() };
export const listAlertsInput = z.object({ ...territoryFilter, ...skipTakeInput() });
export const pagedAlertsInput = z.object({ ...territoryFilter, ...pageInput });

export const validateAlertInput = z.object({ alertId: zId, validated: z.boolean() });

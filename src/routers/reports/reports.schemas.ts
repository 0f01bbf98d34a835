import { z } from 'zod';
import { REPORT_STATUSES, REPORT_TARGET_TYPES } from '../../entities/report.entity.js';
import { lenientEnum } from '../../platform/enums.js';
import { zId } from '../../platform/ids.js';
import { pagedOutput, pageInput, skipTakeInput } from '../../platform/pagination.js';
import { zOptionalText, zText } from '../../platform/text.js';

export const REPORT_REASON_MAX = 300;
export const REPORT_DETAILS_MAX = 2000;

export const reportOutput = z
  .object({
    id: z.uuid(),
    targetType: z.enum(REPORT_TARGET_TYPES),
    targetId: z.uuid(),
    territoryId: z.uuid(),
    reason: z.string(),
    details: z.string().nullable(),
    status: z.enum(REPORT_STATUSES),
    createdAtUtc: z.iso.datetime(),
  })
  .meta({ id: 'Report' });
export type ReportOutput = z.infer<typeof reportOutput>;

export const reportPage = pagedOutput(reportOutput).meta({ id: 'ReportPage' });

const reportBody = {
  reason: zText({ max: REPORT_REASON_MAX }),
  details: zOptionalText(REPORT_DETAILS_MAX),
};

export const reportPostInput = z.object({ postId: zId, ...reportBody });
export type ReportPostInput = z.infer<typeof reportPostInput>;

export const reportUserInput = z.object({
  userId: zId,
  ...reportBody,
  /** The territory the user is reported in; else the X-Session-Id selection (none: 400). */
  territoryId: zId.nullish(),
});
export type ReportUserInput = z.infer<typeof reportUserInput>;

const reportFilter = {
  /** Optional when the X-Session-Id session has a selected territory. */
  territoryId: zId.optional(),
  targetType: lenientEnum(REPORT_TARGET_TYPES).optional(),
  status: lenientEnum(REPORT_STATUSES).optional(),
};
export const listReportsInput = z.object({ ...reportFilter, ...skipTakeInput(20) });
export const pagedReportsInput = z.object({ ...reportFilter, ...pageInput });
export type ReportFilter = { territoryId?: string; targetType?: (typeof REPORT_TARGET_TYPES)[number]; status?: (typeof REPORT_STATUSES)[number] };

import { z } from 'zod';
import { router } from '../../trpc/init.js';
import { authedProcedure } from '../../trpc/procedures.js';
import { alertOutput, alertPage, listAlertsInput, pagedAlertsInput, reportAlertInput, validateAlertInput } from './alerts.schemas.js';
import * as alerts from './alerts.service.js';
import { sessionTerritoryHeader } from '../../platform/service-context.js';

const TAGS = ['Alerts'];

export const alertsRouter = router({
  report: authedProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/alerts',
        requestHeaders: sessionTerritoryHeader,
        tags: TAGS,
        summary: 'Report an alert (members; needs ALERTPOSTS; PENDING until a curator validates it)',
      },
      successStatus: 201,
    })
    .input(reportAlertInput)
    .output(alertOutput)
    .mutation(({ ctx, input }) => alerts.reportAlert(ctx, input)),

  list: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/alerts',
        requestHeaders: sessionTerritoryHeader,
        tags: TAGS,
        summary: "A territory's VALIDATED alerts, newest first (needs ALERTPOSTS)",
      },
    })
    .input(listAlertsInput)
    .output(z.array(alertOutput))
    .query(({ ctx, input }) => alerts.listAlerts(ctx, input)),

  paged: authedProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/v1/alerts/paged',
        requestHeaders: sessionTerritoryHeader,
        tags: TAGS,
        summary: "A territory's VALIDATED alerts, newest first (paged; needs ALERTPOSTS)",
      },
    })
    .input(pagedAlertsInput)
    .output(alertPage)
    .query(({ ctx, input }) => alerts.pageAlerts(ctx, input)),

  validate: authedProcedure
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/api/v1/alerts/{alertId}/validation',
        tags: TAGS,
        summary: 'Validate or reject an alert (curator; needs ALERTPOSTS; repeatable)',
      },
    })
    .input(validateAlertInput)
    .output(alertOutput)
    .mutation(({ ctx, input }) => alerts.validateAlert(ctx, input)),
});

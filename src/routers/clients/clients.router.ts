import { z } from 'zod';
import { router } from '../../trpc/init.js';
import { adminProcedure } from '../../trpc/procedures.js';
import { clientIdInput, clientOutput, clientWithSecretOutput, registerClientInput } from './clients.schemas.js';
import { deactivateClient, listClients, registerClient, rotateClientSecret } from './clients.service.js';

const TAGS = ['Administration'];

export const clientsRouter = router({
  register: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/admin/clients',
        tags: TAGS,
        summary: 'Register a client application of the journeys API (its secret is shown once)',
      },
      successStatus: 201,
    })
    .input(registerClientInput)
    .output(clientWithSecretOutput)
    // No Location: a client application has no URL of its own to read (the list shows it; DESIGN section 4: "where a
    // resource URL exists").
    .mutation(({ ctx, input }) => registerClient(ctx, input)),

  list: adminProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/admin/clients', tags: TAGS, summary: 'The client applications (never their secrets)' } })
    .input(z.object({}))
    .output(z.array(clientOutput))
    .query(({ ctx }) => listClients(ctx)),

  rotateSecret: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/admin/clients/{id}/rotate-secret',
        tags: TAGS,
        summary: 'A new secret, shown once; the old one and every token issued before stop working at once',
      },
    })
    .input(clientIdInput)
    .output(clientWithSecretOutput)
    .mutation(({ ctx, input }) => rotateClientSecret(ctx, input)),

  deactivate: adminProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/api/v1/admin/clients/{id}',
        tags: TAGS,
        summary: 'Deactivate a client application: its tokens stop working at once',
      },
      successStatus: 204,
    })
    .input(clientIdInput)
    .output(z.void())
    .mutation(({ ctx, input }) => deactivateClient(ctx, input)),
});

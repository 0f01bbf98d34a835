import { z } from 'zod';
import { CLIENT_SCOPES } from '../../entities/client-application.entity.js';
import { zId } from '../../platform/ids.js';
import { zOptionalText, zText, zUrl } from '../../platform/text.js';

const scope = z.enum(CLIENT_SCOPES);

export const registerClientInput = z.object({
  name: zText({ max: 200 }),
  description: zOptionalText(2000),
  scopes: z.array(scope).min(1, 'at least one scope').max(CLIENT_SCOPES.length),
  // http(s) only (spec Authentication 11: javascript: and data: are blocked).
  redirectUris: z.array(zUrl).max(10).default([]),
});
export type RegisterClientInput = z.infer<typeof registerClientInput>;

export const clientIdInput = z.object({ id: zId });

export const clientOutput = z
  .object({
    id: z.uuid(),
    clientId: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    scopes: z.array(scope),
    redirectUris: z.array(z.string()),
    isActive: z.boolean(),
    createdAtUtc: z.iso.datetime(),
  })
  .meta({ id: 'ClientApplication' });
export type ClientOutput = z.infer<typeof clientOutput>;

/** Registration and rotation answer the secret, once: only its hash is kept. */
export const clientWithSecretOutput = clientOutput.extend({ clientSecret: z.string() }).meta({ id: 'ClientApplicationWithSecret' });
export type ClientWithSecretOutput = z.infer<typeof clientWithSecretOutput>;

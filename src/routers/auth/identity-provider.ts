import { createRemoteJWKSet, jwtVerify } from 'jose';
import type { AppConfig, AuthProviderConfig } from '../../config.js';
import { badRequest, unauthorized, validationFailed } from '../../platform/problems.js';

type KeySet = ReturnType<typeof createRemoteJWKSet>;

// One key set per JWKS URL for the whole process: jose caches the fetched keys and refreshes them on rotation.
const keySets = new Map<string, KeySet>();
const keySetOf = (provider: AuthProviderConfig) => {
  let keySet = keySets.get(provider.jwksUrl);
  if (!keySet) keySets.set(provider.jwksUrl, (keySet = createRemoteJWKSet(new URL(provider.jwksUrl))));
  return keySet;
};

/**
 * The provider's subject for this login. In trust mode (outside production by default) the client's `externalId`
 * is taken as given; otherwise the provider's `idToken` is verified against its JWKS, issuer and audience and its
 * `sub` is the identity (it must match `externalId`).
 */
export async function resolveExternalId(config: AppConfig, input: { authProvider: string; externalId: string; idToken?: string | null }): Promise<string> {
  if (config.auth.trustProviderClaims) return input.externalId;
  const provider = config.auth.providers.find((p) => p.name === input.authProvider);
  if (!provider) throw badRequest(`The identity provider "${input.authProvider}" is not supported.`, 'UNKNOWN_AUTH_PROVIDER');
  if (!input.idToken) throw validationFailed('idToken', 'is required to sign in with this provider');
  let subject: string | undefined;
  try {
    const { payload } = await jwtVerify(input.idToken, keySetOf(provider), { issuer: provider.issuer, audience: provider.audience });
    subject = payload.sub;
  } catch {
    throw unauthorized('The identity provider token is invalid or expired.');
  }
  if (!subject) throw unauthorized('The identity provider token has no subject.');
  if (subject !== input.externalId) throw unauthorized('The identity provider token does not belong to this externalId.');
  return subject;
}

/**
 * Whether a request's URL is on the journeys API (`/api/v2/`), as the router reads it: Fastify decodes a percent-encoded
 * path before matching (`/api/%762/...` reaches the v2 routes), so the journeys' authentication and error body follow
 * the decoded path too. Only a path holding `%` is decoded (a malformed encoding: as written).
 */
export function isJourneyUrl(url: string): boolean {
  if (url.startsWith('/api/v2/')) return true;
  if (!url.includes('%')) return false;
  const end = url.indexOf('?');
  const path = end < 0 ? url : url.slice(0, end);
  if (!path.includes('%')) return false;
  try {
    return decodeURIComponent(path).startsWith('/api/v2/');
  } catch {
    return false;
  }
}

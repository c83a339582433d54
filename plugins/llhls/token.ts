import { safeEqual } from '../../sdk/index.ts';
import type { IamAccess } from '../iam/api.ts';
import { llhlsErrors } from './errors.ts';

/**
 * A playlist request's `?token=` on main: `llhls.token`, or (with the iam plugin) a user's key
 * `<user>:<token>` whose `hls` policies let it play `stream`. Throws 401 `LLHLS_TOKEN` (a wrong
 * token or key) or 403 `LLHLS_FORBIDDEN` (a key its policies do not allow here).
 */
export function checkToken(configured: string, token: string, stream: string, iam: IamAccess | undefined): void {
  if (configured === '' || safeEqual(token, configured)) return;
  const d = iam && token.includes(':') ? iam.streamKey(token, { protocol: 'hls', stream, action: 'PLAY' }) : undefined;
  if (!d || (!d.allowed && d.reason === 'invalid token')) throw llhlsErrors.token();
  if (!d.allowed) throw llhlsErrors.forbidden(d.reason);
}

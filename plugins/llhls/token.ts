import { safeEqual, type StreamTable } from '../../sdk/index.ts';
import { llhlsErrors } from './errors.ts';

/**
 * A playlist request's `?token=` on main: `llhls.token`, or a user's key `<user>:<token>` the
 * stream table's rule allows to play `stream` (an access plugin's `decideKey`: the iam plugin's
 * `hls` policies). Throws 401 `LLHLS_TOKEN` (a wrong token or key) or 403 `LLHLS_FORBIDDEN` (a
 * key not allowed here).
 */
export function checkToken(configured: string, token: string, stream: string, streams: Pick<StreamTable, 'keyRefusal'>): void {
  if (configured === '' || safeEqual(token, configured)) return;
  if (!token.includes(':')) throw llhlsErrors.token();
  const peer = { id: 'hls-playlist', protocol: 'hls', stream, remote: '', key: token, params: {}, traffic: () => ({ rxBytes: 0, txBytes: 0 }) };
  const r = streams.keyRefusal(peer, 'play');
  if (!r) return;
  throw r.kind === 'unauthorized' ? llhlsErrors.token() : llhlsErrors.forbidden(r.reason);
}

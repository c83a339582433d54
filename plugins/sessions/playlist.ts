/**
 * The session-tagged playlists of reference 11.6, as pure text functions.
 *
 * - With a session: every URI ending in `.m3u8` gets a fresh `session` (a master playlist's
 *   variants; a line naming the playlist itself becomes a comment), every segment URI (`.ts`,
 *   fMP4 `.m4s`/`.mp4`, audio) and every `URI="..."` of `#EXT-X-MAP`/`#EXT-X-KEY`-like tags gets
 *   the current one.
 * - Without one: a master playlist gets fresh sessions on its variants; a media playlist is
 *   replaced by a one-line master naming itself with a fresh session, so the client comes back
 *   with an id before it fetches any segment.
 */
const SEGMENT = /\.(ts|m4s|mp4|aac|m4a|vtt)$/;

export function rewritePlaylist(body: string, path: string, query: string, session: string | undefined, fresh: () => string): string {
  const name = path.slice(path.lastIndexOf('/') + 1);
  if (session === undefined && !body.includes('#EXT-X-STREAM-INF')) {
    const params = new URLSearchParams(query);
    params.set('session', fresh());
    params.sort();
    return `#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-STREAM-INF:BANDWIDTH=1024\n${name}?${params.toString()}`;
  }
  const lines = body.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const trimmed = line.trim();
    if (trimmed === '') continue;
    if (trimmed.startsWith('#')) {
      if (session !== undefined && trimmed.includes('URI="')) lines[i] = line.replace(/URI="([^"]*)"/g, (_m, uri: string) => `URI="${tagged(uri, session, SEGMENT)}"`);
      continue;
    }
    const bare = trimmed.split('?')[0]!;
    if (bare.endsWith('.m3u8')) {
      if (bare === name || bare === path) lines[i] = `# m3u8 is referencing itself: ${trimmed}`;
      else lines[i] = withSession(trimmed, fresh());
    } else if (session !== undefined && SEGMENT.test(bare)) {
      lines[i] = withSession(trimmed, session);
    }
  }
  return lines.join('\n');
}

function tagged(uri: string, session: string, ext: RegExp): string {
  return ext.test(uri.split('?')[0]!) ? withSession(uri, session) : uri;
}

/** The URI with `session=<id>` set among its query parameters (re-encoded, keys sorted). */
function withSession(uri: string, session: string): string {
  const q = uri.indexOf('?');
  const params = new URLSearchParams(q < 0 ? '' : uri.slice(q + 1));
  params.set('session', session);
  params.sort();
  return `${q < 0 ? uri : uri.slice(0, q)}?${params.toString()}`;
}

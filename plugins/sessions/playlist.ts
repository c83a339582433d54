/** Segment files (MPEG-TS, fMP4, audio, subtitles): tagged with the session, counted for the one in their query. */
export const SEGMENT = /\.(ts|m4s|mp4|aac|m4a|vtt)$/;

/**
 * A playlist as a viewer gets it (reference 11.6): variants get fresh ids (a line naming the playlist
 * itself becomes a comment); with `session`, segment URIs and `URI="..."` attributes naming segments
 * are tagged with it; without, a media playlist becomes a one-line master naming itself with a fresh id.
 */
export function rewritePlaylist(body: string, path: string, query: string, session: string | undefined, fresh: () => string): string {
  const name = path.slice(path.lastIndexOf('/') + 1);
  if (session === undefined && !body.includes('#EXT-X-STREAM-INF')) {
    return `#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-STREAM-INF:BANDWIDTH=1024\n${withSession(`${name}?${query}`, fresh(), name.length)}`;
  }
  const lines = body.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const trimmed = line.trim();
    if (trimmed === '') continue;
    if (trimmed.startsWith('#')) {
      if (session !== undefined && trimmed.includes('URI="')) {
        lines[i] = line.replace(/URI="([^"]*)"/g, (m, uri: string) => (SEGMENT.test(uri.split('?')[0]!) ? `URI="${withSession(uri, session)}"` : m));
      }
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

/** The URI with `session=<id>` set among its query parameters (re-encoded, keys sorted); its query starts after `q`. */
function withSession(uri: string, session: string, q = uri.indexOf('?')): string {
  const params = new URLSearchParams(q < 0 ? '' : uri.slice(q + 1));
  params.set('session', session);
  params.sort();
  return `${q < 0 ? uri : uri.slice(0, q)}?${params.toString()}`;
}

/**
 * A scripted HLS viewer over plain fetch: the playlist without `session` (a one-line master), the
 * playlist again with the id it names, then the segments it lists. Returns the session id.
 */
export async function view(base: string, playlist: string): Promise<{ id: string; segments: string[] }> {
  const master = await (await fetch(`${base}${playlist}`)).text();
  const line = master.split('\n').find((l) => l && !l.startsWith('#'))!;
  const id = new URLSearchParams(line.split('?')[1]).get('session')!;
  const dir = playlist.slice(0, playlist.lastIndexOf('/') + 1);
  const media = await (await fetch(`${base}${dir}${line}`)).text();
  const segments = media.split('\n').filter((l) => l && !l.startsWith('#'));
  for (const s of segments) await (await fetch(`${base}${dir}${s}`)).arrayBuffer();
  return { id, segments };
}

export const MEDIA = '#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:1\n#EXTINF:1.0,\np0.ts\n#EXTINF:1.0,\np1.ts\n';

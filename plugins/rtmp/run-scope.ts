import type { RunGrant, RunUse } from '../../sdk/index.ts';

/*
 * What a child's run credential allows over RTMP (issue 43.4): its placeholders wrote
 * `rtmp://<host>:<port>/<path>?token=<run token>`; an output's URL may be published, an input's
 * played, and nothing else. Paths compare as the server sees them: empty segments collapse,
 * nothing is percent-decoded (names.ts).
 */

const collapse = (p: string): string => `/${p.split('/').filter((s) => s !== '').join('/')}`;

/** The stream paths a run's command names with its token, in the section of `mode`. */
export function runStreamPaths(grant: RunGrant, mode: 'publish' | 'play'): string[] {
  const section = mode === 'publish' ? 'output' : 'input';
  const mark = `?token=${grant.token}`;
  const out: string[] = [];
  for (const f of grant.fields) {
    if (f.section !== section) continue;
    for (let i = f.text.indexOf(mark); i >= 0; i = f.text.indexOf(mark, i + mark.length)) {
      const before = f.text.slice(0, i);
      const s = before.lastIndexOf('://');
      // the scheme, perhaps escaped for a tee or filter (`rtmp\\://`)
      if (s < 0 || !/rtmps?\\*$/i.test(before.slice(0, s))) continue;
      const rest = before.slice(s + 3);
      const slash = rest.indexOf('/');
      if (slash >= 0) out.push(collapse(rest.slice(slash)));
    }
  }
  return out;
}

/** Whether the live run may publish (an output of its) or play (an input of its) the stream at `path`. */
export function runMayStream(grant: RunGrant, path: string, mode: 'publish' | 'play'): boolean {
  return runStreamPaths(grant, mode).includes(collapse(path));
}

/** What a run's command names over RTMP, as policies see it: an output's stream published, an input's played. */
export function runStreamUses(grant: RunGrant): RunUse[] {
  return [
    ...runStreamPaths(grant, 'publish').map((p) => ({ type: 'rtmp', resource: p.slice(1), action: 'PUBLISH' })),
    ...runStreamPaths(grant, 'play').map((p) => ({ type: 'rtmp', resource: p.slice(1), action: 'PLAY' })),
  ];
}

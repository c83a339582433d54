import { createHash } from 'node:crypto';
import { perRun, type RunCredentials, type RunGrant, type RunUse } from '../../sdk/index.ts';
import { parseStreamId } from './streamid.ts';

/*
 * What a child's run credential allows over SRT (issue 43.4): its `{srt}` placeholders wrote
 * `srt://...&streamid=<resource>,mode:<mode>,token:<run token>[&passphrase=<run passphrase>]`;
 * the token admits exactly those resources in those modes. The listener learns the live runs in
 * advance (the handshake is answered synchronously in the addon): `SrtRun` is what it gets.
 */

/** A run as the SRT host holds it: its token, its passphrase, the `<mode> <resource>` it may use. */
export interface SrtRun {
  token: string;
  passphrase: string;
  grants: string[];
}

/**
 * The passphrase of a run (32 characters): a value of its own so that srt.passphrase never
 * reaches a child; derived from the token, so it adds no secret the run's command does not hold.
 */
export function runPassphrase(token: string): string {
  return createHash('sha256').update(`srt passphrase ${token}`, 'utf8').digest('base64url').slice(0, 32);
}

/** Where a streamid value ends in a field: the next query parameter, a tee separator, an option's end. */
const END = /[&|\]\s]/;

/** The `<mode> <resource>` pairs a run's command names with its token (one parse per run). */
export const runSrtGrants = perRun(parseGrants);

function parseGrants(grant: RunGrant): string[] {
  const out = new Set<string>();
  for (const f of grant.fields) {
    if (!f.text.includes(grant.token)) continue;
    for (let i = f.text.indexOf('streamid='); i >= 0; i = f.text.indexOf('streamid=', i + 9)) {
      const rest = f.text.slice(i + 9);
      const end = rest.search(END);
      const id = parseStreamId(end < 0 ? rest : rest.slice(0, end));
      if (id.ok && id.id.token === grant.token) out.add(`${id.id.mode} ${id.id.resource}`);
    }
  }
  return [...out];
}

/** What a run's command names over SRT, as policies see it: a `publish` streamid published, a `request` played. */
export function runSrtUses(grant: RunGrant): RunUse[] {
  return parseGrants(grant).map((g) => {
    const cut = g.indexOf(' ');
    const resource = g.slice(cut + 1);
    return { type: 'srt', resource: resource.startsWith('/') ? resource.slice(1) : resource, action: g.slice(0, cut) === 'publish' ? 'PUBLISH' : 'PLAY' };
  });
}

/** The live runs that use the SRT listener, as the host gets them. */
export function srtRuns(live: readonly RunGrant[]): SrtRun[] {
  const out: SrtRun[] = [];
  for (const g of live) {
    const grants = runSrtGrants(g);
    if (grants.length) out.push({ token: g.token, passphrase: runPassphrase(g.token), grants });
  }
  return out;
}

/**
 * Keeps the SRT host's list of runs current: one push per turn of the event loop however many
 * runs started or ended in it; `beforeStart(id)` resolves once the host holds the runs of a
 * process about to start that calls the listener (at once for one that does not).
 */
export function runPusher(runs: RunCredentials, setRuns: (list: SrtRun[]) => Promise<void>) {
  let queued: Promise<void> | undefined;
  const push = (): Promise<void> => (queued ??= new Promise<void>((r) => setImmediate(r)).then(() => {
    queued = undefined;
    return setRuns(srtRuns(runs.live()));
  }));
  return {
    push,
    beforeStart: async (processId: string): Promise<void> => {
      if (srtRuns(runs.live().filter((g) => g.processId === processId)).length) await push();
    },
  };
}

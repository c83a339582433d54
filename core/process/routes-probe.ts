import type { HttpScope, RunCredentials } from '../../sdk/index.ts';
import { assemble, runFields } from './command.ts';
import { runMask } from './preauth.ts';
import type { ProcessManager } from './manager.ts';
import { probeJson } from './json-write.ts';
import { json } from './routes.ts';
import { emptySkills } from './parse/skills.ts';
import { parseProbe } from './parse/probe.ts';
import { runProbe } from './probe.ts';
import type { Spawn } from './run-collect.ts';
import { IdParams, Probe, Skills as SkillsSchema } from './schema.ts';
import type { Probe as ProbeData } from './parse/schemas.ts';
import type { Skills } from './skills.ts';

const TAGS = ['v16.7.2'];

/**
 * What a probe of process `id` finds (reference 4.4.10): never fails, problems go into the log.
 * The route and the `processes` service (GraphQL `probe`) both answer from here.
 */
export async function probeProcess(m: ProcessManager, binary: string, closing: AbortSignal, id: string, run?: Spawn, runs?: RunCredentials): Promise<ProbeData> {
  const e = m.get(id);
  if (!e) return { streams: [], log: [`Unknown process ID (${id})`] };
  if (e.refresh() !== undefined) return { streams: [], log: [] };
  // the probe is a run of its own: its inputs reach the service's listeners with its own token
  const cred = runs?.issue(id);
  try {
    const r = cred ? e.resolveFor(cred) : e.resolution!;
    if (typeof r === 'string') return { streams: [], log: [] };
    const inputs = r.inputs.map(direct);
    const probed = { ...r, outputs: [], inputs };
    // what its maker may no longer read is not probed either (asked as at each start)
    const refused = cred && e.makerRefusal(probed, cred.token);
    if (refused !== undefined) return { streams: [], log: [`probe refused: ${refused}`] };
    cred?.bind(runFields(probed));
    const found = parseProbe(await runProbe(binary, assemble(r.options, inputs, []), closing, undefined, run));
    // ffprobe's lines and streams name the URLs it opened: the probe's credential stays out of the answer
    if (cred) {
      const mask = runMask(cred);
      found.log = found.log.map(mask);
      for (const s of found.streams) s.url = mask(s.url);
    }
    return found;
  } finally {
    cred?.revoke();
  }
}

/** `GET /api/v3/process/{id}/probe` (reference 4.4.10): always 200. */
export function probeRoutes(http: HttpScope, probe: (id: string) => Promise<ProbeData>): void {
  http.get('/api/v3/process/:id/probe', {
    schema: { summary: 'Probe the inputs of a process', tags: TAGS, params: IdParams, response: { 200: Probe } },
  }, async (req, reply) => json(reply, probeJson(await probe(req.params.id)))); // by hand: number rules of reference 2.4
}

/**
 * A `playout:<url>` input is read through the playout plugin's relay when the process runs (its
 * preStart rewrite); stock ffmpeg cannot open `playout:`, so the probe reads the URL behind it.
 */
function direct<T extends { address: string }>(io: T): T {
  return io.address.startsWith('playout:') ? { ...io, address: io.address.slice('playout:'.length) } : io;
}

/** `GET /api/v3/skills` and `GET /api/v3/skills/reload` (reference 4.6). */
export function skillsRoutes(http: HttpScope, skills: Skills): void {
  http.get('/api/v3/skills', {
    schema: { summary: 'What the installed encoder can do', tags: TAGS, response: { 200: SkillsSchema } },
  }, async () => (await skills.get()) ?? emptySkills());
  http.get('/api/v3/skills/reload', {
    schema: { summary: 'Detect the encoder\'s skills again', tags: TAGS, response: { 200: SkillsSchema } },
  }, async () => (await skills.reload()) ?? emptySkills());
}

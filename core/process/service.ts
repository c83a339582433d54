import { isApiError, type ApiProbe, type ChildSpawnOptions, type ApiProcess, type ProcessesService, type ProcessProgressInfo, type ProcessStateCounts, type RunUse } from '../../sdk/index.ts';
import { normalize } from './config-model.ts';
import { parseParts } from './list-filter.ts';
import type { Authority, ProcessManager } from './manager.ts';
import type { ProcessViews } from './views.ts';
import type { ProcessConfig } from './schema.ts';
import { sourceProblem, type AccessList } from './validate.ts';

/** What the service reads besides the manager: the routes' own views and probe. */
export interface ServiceParts {
  stateEntries: ProcessStateCounts;
  views: ProcessViews;
  probe(id: string): Promise<ApiProbe>;
  /** `encoder.access.input`, compiled once. */
  input: AccessList;
  /** The encoder's skills (skills.ts), detected on first use. */
  skills(): Promise<{ codecs: { video: Array<{ id: string; encoders: string[] | null }> } } | undefined>;
  /** Whether `maker` may have a process it set at `since` (unix seconds) do `use` (`httpHooksRef.processUseBy`; true when no plugin decides). */
  makerMay(maker: string, use: RunUse, since: number): boolean;
  /** What a plugin's `put` for `maker` (asking at `since`) is held to: its admission and the maker kept (undefined when no access plugin decides). */
  authorityOf(maker: string, since: number): Authority | undefined;
  /** What of the disk folder a process's children reach (makers.ts `diskOf`). */
  diskOf(e: { maker: string | undefined; makerSince: number }): ChildSpawnOptions['disk'];
  log?: { warn(o: object, m: string): void };
}

/**
 * The `processes` service other plugins use (widget, sessions, playout, metrics: cheap views, no
 * logs; GraphQL: the REST objects, from the very views the routes send, so no rule is written twice).
 */
export function processesService(m: ProcessManager, p: ServiceParts): ProcessesService {
  return {
    list: () => [...m.values()].map((e) => e.info()),
    get: (id) => m.get(id)?.info(),
    progress: (id): ProcessProgressInfo | undefined => m.get(id)?.monitor.progressInfo(),
    metadata: (id, key) => m.metadata(id)?.[key],
    metrics: (id) => m.get(id)?.metricsInfo(),
    stateEntries: () => p.stateEntries,
    view: (id, filter): ApiProcess | undefined => {
      const e = m.get(id);
      return e && p.views.object(e, parseParts(filter));
    },
    views: (filter) => {
      const parts = parseParts(filter);
      return [...m.values()].map((e) => p.views.object(e, parts));
    },
    probe: (id) => p.probe(id),
    inputProblem: (address) => sourceProblem(p.input, address),
    makerMay: (id, use) => {
      const e = m.get(id);
      return e !== undefined && (e.maker === undefined || p.makerMay(e.maker, use, e.makerSince));
    },
    makerDisk: (of) => {
      if (typeof of !== 'string') return p.diskOf({ maker: of.maker, makerSince: of.since });
      const e = m.get(of);
      return e && p.diskOf(e);
    },
    recheckMakers: () => [...m.values()].filter((e) => {
      // a tap that throws leaves this run alone (logged; its next start fails on it), not the others unchecked
      try {
        // (a node of a cluster resumes only what it runs: another node took over one it stopped)
        return e.recheckMaker(m.runs(e.id)) !== undefined;
      } catch (err) {
        p.log?.warn({ err, process: e.id }, 'cannot ask the maker of a running process again');
        return false;
      }
    }).length,
    encoderSkills: () => p.skills(),
    put: async (def, maker, since) => {
      const body = structuredClone(def) as unknown as ProcessConfig;
      const e = m.get(def.id);
      // no time given: the same maker keeps its own (an unchanged definition stays unchanged), another is asked now
      const at = since ?? (e?.maker === maker && e ? e.makerSince : Math.floor(Date.now() / 1000));
      const authority = maker === undefined ? undefined : p.authorityOf(maker, at);
      if (!e) {
        await m.add(body, undefined, authority);
        return 'added';
      }
      // the same normal form on both sides: a definition given again changes nothing, its run goes on
      if (e.maker === authority?.maker && (!authority || e.makerSince === authority.since) && JSON.stringify(normalize(body)) === JSON.stringify(e.config)) return 'unchanged';
      // a plugin's process given without a maker is its own again (update keeps the old maker without an authority)
      await m.update(def.id, body, undefined, authority ?? { admit: () => undefined, maker: undefined });
      return 'replaced';
    },
    remove: async (id) => {
      try {
        await m.remove(id);
        return true;
      } catch (err) {
        if (isApiError(err) && err.status === 404) return false;
        throw err;
      }
    },
  };
}

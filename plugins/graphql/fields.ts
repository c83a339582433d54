import type { GraphQLResolveInfo } from 'graphql';
import type { AboutService, AppLogService, ProcessesService } from '../../sdk/index.ts';
import type { MetricsQueryService } from '../metrics/api.ts';
import type { PlayoutService } from '../playout/api.ts';
import type { TrackedContribution } from './compose.ts';
import { graphqlErrors } from './errors.ts';
import { segment, type FieldGuard, type GuardContext } from './guard.ts';
import { ProcessMapper, graphProbe } from './process-map.ts';
import { PROCESS_SDL } from './process-schema.ts';
import { ABOUT_SDL, METRICS_SDL, PLAYOUT_SDL } from './schema.ts';
import { sameItems, track, untrack, type TraceContext } from './result-cache.ts';
import { partsFilter } from './selection.ts';

/** The services the reference's fields are answered from: the same ones the REST routes use. */
export interface FieldDeps {
  processes: ProcessesService;
  about: AboutService;
  log: AppLogService;
  /** Absent when the metrics plugin is not loaded. */
  metrics: MetricsQueryService | undefined;
  /** Absent when the playout plugin is not loaded. */
  playout: PlayoutService | undefined;
  /** What an IAM user may see (guard.ts); none: everyone who may query sees all. */
  guard?: FieldGuard;
}

type MetricsArgs = {
  query: { timerange_seconds?: number | null; interval_seconds?: number | null; metrics: { name: string; labels?: Record<string, unknown> | null }[] };
};

/** Label regexes are strings; other values are ignored, as the reference does. */
function stringLabels(labels: Record<string, unknown> | null | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(labels ?? {})) if (typeof v === 'string') out[k] = v;
  return out;
}

/** The reference's fields (section 15) as contributions over the core's and plugins' services. */
export function referenceFields(d: FieldDeps): TrackedContribution[] {
  const mapper = new ProcessMapper();
  const check = (ctx: GuardContext, method: string, path: string) => d.guard?.check(ctx, method, path);
  const one = (id: string, rest = '') => `/api/v3/process/${segment(id)}${rest}`;
  return [{
    name: 'graphql', typeDefs: ABOUT_SDL,
    resolvers: {
      Query: {
        about: () => {
          const { auths: _auths, ...about } = d.about.about();
          return about;
        },
        log: (_p: unknown, _a: unknown, ctx: GuardContext) => {
          check(ctx, 'GET', '/api/v3/log');
          const g = d.guard;
          return d.log.console(g && ((e) => g.sees(ctx, { process: str(e.process), stream: str(e.stream) })));
        },
      },
    },
  }, {
    // processes and process(id) record their reads: answers are kept while the processes are unchanged
    name: 'graphql', typeDefs: PROCESS_SDL, tracked: true,
    resolvers: {
      Query: {
        // one read of every process from the REST views; idle ones come back converted already
        processes: (_p: unknown, _a: unknown, ctx: TraceContext, info: GraphQLResolveInfo) => {
          check(ctx, 'GET', '/api/v3/process');
          const filter = partsFilter(info);
          const all = track(ctx, () => d.processes.views(filter), sameItems);
          return (d.guard ? all.filter((p) => d.guard!.reads(ctx, p.id)) : all).map((p) => mapper.process(p));
        },
        process: (_p: unknown, args: { id: string }, ctx: TraceContext, info: GraphQLResolveInfo) => {
          check(ctx, 'GET', one(args.id));
          const filter = partsFilter(info);
          const p = track(ctx, () => d.processes.view(args.id, filter));
          if (!p) throw graphqlErrors.unknownProcess(args.id);
          return mapper.process(p);
        },
        // a probe runs the encoder: never kept
        probe: async (_p: unknown, args: { id: string }, ctx: TraceContext) => {
          check(ctx, 'GET', one(args.id, '/probe'));
          untrack(ctx);
          return graphProbe(await d.processes.probe(args.id));
        },
      },
    },
  }, {
    name: 'graphql', typeDefs: METRICS_SDL,
    resolvers: {
      Query: {
        metrics: (_p: unknown, { query: q }: MetricsArgs, ctx: GuardContext) => {
          check(ctx, 'POST', '/api/v3/metrics');
          // without the metrics plugin: the empty answer, as the reference gives without history
          if (!d.metrics) return { timerange_seconds: 0, interval_seconds: 0, metrics: [] };
          const r = d.metrics.query({
            timerange_sec: q.timerange_seconds ?? 0,
            interval_sec: q.interval_seconds ?? 0,
            metrics: q.metrics.map((m) => ({ name: m.name, labels: stringLabels(m.labels) })),
          });
          const seen = d.guard ? r.metrics.filter((m) => d.guard!.sees(ctx, m.labels?.processid === undefined ? {} : { process: m.labels.processid })) : r.metrics;
          return { timerange_seconds: r.timerange_sec, interval_seconds: r.interval_sec, metrics: seen };
        },
      },
    },
  }, playoutFields(d, check, one)];
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** `playoutStatus`, `playlistState`: the playout service's status, as its REST routes. */
function playoutFields(d: FieldDeps, check: (ctx: GuardContext, method: string, path: string) => void, one: (id: string, rest?: string) => string): TrackedContribution {
  return {
    name: 'graphql', typeDefs: PLAYOUT_SDL,
    resolvers: {
      Query: {
        playoutStatus: async (_p: unknown, args: { id: string; input: string }, ctx: GuardContext) => {
          check(ctx, 'GET', one(args.id, `/playout/${segment(args.input)}/status`));
          if (!d.playout) throw graphqlErrors.playoutNotLoaded();
          const s = await d.playout.status(args.id, args.input);
          const io = (x: typeof s.input) => ({ ...x, state: x.state.toUpperCase() });
          return { ...s, input: io(s.input), output: io(s.output) };
        },
        playlistState: (_p: unknown, args: { id: string; input: string }, ctx: GuardContext) => {
          check(ctx, 'GET', one(args.id, `/playout/${segment(args.input)}/status`));
          if (!d.playout) throw graphqlErrors.playoutNotLoaded();
          return d.playout.playlist?.(args.id, args.input) ?? null;
        },
      },
    },
  };
}

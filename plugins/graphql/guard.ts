import type { FastifyReply } from 'fastify';
import type { ApiError, ProcessesService } from '../../sdk/index.ts';
import { IAM_SUBJECT, type IamAccess } from '../iam/api.ts';
import type { GraphqlContext } from './api.ts';

/*
 * Who sees what through GraphQL (issue 49.2). A caller that is an IAM user (its token's subject
 * `iam:<name>`) gets from each field what the field's REST twin would give it: `log` as
 * `GET /api/v3/log`, `metrics` as `POST /api/v3/metrics`, `process(id)` as
 * `GET /api/v3/process/<id>` (its `api` policies and a `process` policy to read the process),
 * `processes` as the REST list (only the processes it may read); a vendor's field of Query or
 * Mutation as `POST /api/graph/query/<field>` (nothing says what it reveals: an operator grants
 * it by that path). `about` and `ping` answer everyone who may query. Every other caller (the
 * config file's user, an identity provider's login, no auth) is asked nothing, as before.
 */

/** A query's context as the guard reads it: the caller, and the route's reply (its request). */
export type GuardContext = GraphqlContext & { reply?: object };

/** The processAccess hook as the core's list asks it (`httpHooksRef.processAccess`). */
export type ProcessAccess = (reply: FastifyReply, q: { id: string; domain: string; action: 'read' }) => boolean | undefined;
/** The sees hook as the log, metrics and sessions routes ask it (`httpHooksRef.sees`). */
export type Sees = (reply: FastifyReply, about: { process?: string; stream?: string }) => boolean | undefined;

export interface FieldGuard {
  /** Throws the refusal (an ApiError: the field's error keeps its status) when the caller may not `method path`. */
  check(ctx: GuardContext, method: string, path: string): void;
  /** Whether the caller may read process `id`, as the REST list decides. */
  reads(ctx: GuardContext, id: string): boolean;
  /** Whether the caller sees a log line or a metric series about `about` (`{}`: the service's own), as the REST routes decide. */
  sees(ctx: GuardContext, about: { process?: string; stream?: string }): boolean;
  /** Whether answers to this caller may differ from others' (never kept for another caller). */
  personal(auth: GraphqlContext['auth']): boolean;
}

const isIam = (auth: GraphqlContext['auth']): auth is { user: string; via: string } => auth?.user.startsWith(IAM_SUBJECT) === true;

export function fieldGuard(iam: IamAccess | undefined, processes: ProcessesService, access: ProcessAccess | undefined, sees?: Sees): FieldGuard {
  return {
    check(ctx, method, path) {
      if (!isIam(ctx.auth)) return;
      // without the iam plugin auth refuses such tokens before a query runs: refuse here too
      const no: ApiError | undefined = iam ? iam.mayApi(ctx.auth.user, method, path) : undefined;
      if (no || !iam) throw no ?? new Error('no IAM to decide');
    },
    reads(ctx, id) {
      if (!isIam(ctx.auth) || !access || !ctx.reply) return true;
      return access(ctx.reply as FastifyReply, { id, domain: processes.get(id)?.domain ?? '', action: 'read' }) !== false;
    },
    sees(ctx, about) {
      return !isIam(ctx.auth) || !sees || !ctx.reply || sees(ctx.reply as FastifyReply, about) !== false;
    },
    personal: isIam,
  };
}

/** A REST path segment for an id (the twin's path as a client would write it). */
export const segment = (id: string): string => encodeURIComponent(id);

import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type, type HttpScope } from '../../sdk/index.ts';
import { processErrors } from './errors.ts';
import { parseParts, selectProcesses } from './list-filter.ts';
import type { Authority, ProcessManager } from './manager.ts';
import type { ProcessEntry } from './process-entry.ts';
import {
  Command, IdParams, OkString, Process, ProcessConfig, ProcessConfigUpdate, ProcessListQuery, ProcessReport, ProcessState,
} from './schema.ts';
import type { ProcessViews } from './views.ts';

const TAGS = ['v16.7.2'];
const FilterQuery = Type.Object({ filter: Type.Optional(Type.String()) });
const OK = '"OK"';

/**
 * Sends JSON as written by json-write.ts (the route schemas document it); fastify passes a string
 * or Buffer with a JSON type through unserialized, and takes a Buffer's length as it is.
 */
export const json = (reply: FastifyReply, body: string | Buffer) => reply.type('application/json; charset=utf-8').send(body);

/** Whether the caller of a request may act on a process (`httpHooksRef.processAccess`). */
export type ProcessMay = (req: FastifyRequest, id: string, domain: string, action: 'read' | 'write') => boolean;

/**
 * What the caller of a request may have a process do (`httpHooksRef.processUse`): a verdict on a
 * new entry's command, or undefined when nobody decides (no access plugin).
 */
export type ProcessAuthority = (req: FastifyRequest) => Authority | undefined;

/**
 * The process API of reference 4.4.1-4.4.9; the list shows and a create makes only what the
 * caller may (`may`), and a create or update only a process whose command names what the caller
 * may do (`authority`).
 */
export function processRoutes(http: HttpScope, m: ProcessManager, views: ProcessViews, extras?: (id: string) => string, may: ProcessMay = () => true,
  authority: ProcessAuthority = () => undefined): void {
  const entry = (id: string): ProcessEntry => {
    const e = m.get(id);
    if (!e) throw processErrors.notFound();
    return e;
  };

  http.get('/api/v3/process', {
    schema: { summary: 'List processes', tags: TAGS, querystring: ProcessListQuery, response: { 200: Type.Array(Process) } },
  }, async (req, reply) => json(reply, views.list(selectProcesses(m.values(), req.query).filter((e) => may(req, e.id, e.domain, 'read')), parseParts(req.query.filter))));

  http.post('/api/v3/process', {
    schema: { summary: 'Add a process (started unless autostart is false)', tags: TAGS, body: ProcessConfig, response: { 200: ProcessConfig } },
  }, async (req, reply) => {
    if (!may(req, (req.body.id ?? '').trim(), (req.body.domain ?? '').trim(), 'write')) throw processErrors.forbidden();
    // an input may reference (`#id:output=o`) only a process the caller may read: its output's address would show
    return json(reply, (await m.add(req.body, (o) => may(req, o.id, o.domain, 'read'), authority(req))).configJson);
  });

  http.get('/api/v3/process/:id', {
    schema: { summary: 'One process', tags: TAGS, params: IdParams, querystring: FilterQuery, response: { 200: Process } },
  }, async (req, reply) => json(reply, views.process(entry(req.params.id), parseParts(req.query.filter))));

  http.put('/api/v3/process/:id', {
    schema: { summary: 'Replace a process (a new id renames it)', tags: TAGS, params: IdParams, body: ProcessConfigUpdate, response: { 200: ProcessConfig } },
  }, async (req, reply) => {
    // a rename or a move to another domain needs the right to write there too
    const cur = m.get(req.params.id);
    const id = typeof req.body?.id === 'string' ? req.body.id.trim() : cur?.id;
    const domain = typeof req.body?.domain === 'string' ? req.body.domain.trim() : cur?.domain;
    // (a missing process: the update answers its own 404)
    if (cur && (id !== cur.id || domain !== cur.domain) && !may(req, id ?? cur.id, domain ?? cur.domain, 'write')) throw processErrors.forbidden();
    return json(reply, (await m.update(req.params.id, req.body, (o) => may(req, o.id, o.domain, 'read'), authority(req))).configJson);
  });

  http.delete('/api/v3/process/:id', {
    schema: { summary: 'Stop and delete a process', tags: TAGS, params: IdParams, response: { 200: OkString } },
  }, async (req, reply) => {
    await m.remove(req.params.id);
    return json(reply, OK);
  });

  http.put('/api/v3/process/:id/command', {
    schema: { summary: 'start, stop, restart or reload a process', tags: TAGS, params: IdParams, body: Command, response: { 200: OkString } },
  }, async (req, reply) => {
    await m.command(req.params.id, req.body.command);
    return json(reply, OK);
  });

  http.get('/api/v3/process/:id/config', {
    schema: { summary: 'The stored config (placeholders kept)', tags: TAGS, params: IdParams, response: { 200: ProcessConfig } },
  }, async (req, reply) => json(reply, entry(req.params.id).configJson));

  http.get('/api/v3/process/:id/state', {
    schema: { summary: 'Runtime state and progress', tags: TAGS, params: IdParams, response: { 200: ProcessState } },
  }, async (req, reply) => {
    const state = entry(req.params.id).stateJson();
    // fields beyond the reference's (stateExtrasRef), appended to its object
    const more = extras?.(req.params.id);
    return json(reply, more ? `${state.slice(0, state.lastIndexOf('}'))},${more}}` : state);
  });

  http.get('/api/v3/process/:id/report', {
    schema: { summary: 'Logs of the current run and the history', tags: TAGS, params: IdParams, response: { 200: ProcessReport } },
  }, async (req, reply) => json(reply, entry(req.params.id).monitor.reportJson()));
}

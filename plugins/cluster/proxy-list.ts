import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { HttpProxy, Upstream } from './proxy-http.ts';

/** `GET /api/v3/process` and its query (`?filter=...&id=...`), nothing below it. */
export function isProcessList(method: string, url: string): boolean {
  if (method !== 'GET') return false;
  return url === '/api/v3/process' || url.startsWith('/api/v3/process?') || url === '/api/v3/process/' || url.startsWith('/api/v3/process/?');
}

interface Listed { id?: unknown }

/**
 * The list in this node's order (its filters applied), each process as its owner lists it (the
 * owner's state and report; config and metadata are the same everywhere). Owners' lists that
 * failed are simply absent: their processes keep this node's view.
 */
export function mergeLists(own: readonly Listed[], owners: ReadonlyMap<string, string>, lists: ReadonlyMap<string, readonly Listed[]>): Listed[] {
  const byNode = new Map<string, Map<unknown, Listed>>();
  for (const [node, list] of lists) byNode.set(node, new Map(list.map((p) => [p.id, p])));
  return own.map((p) => {
    const node = typeof p.id === 'string' ? owners.get(p.id) : undefined;
    return (node !== undefined ? byNode.get(node)?.get(p.id) : undefined) ?? p;
  });
}

/**
 * Answers the process list on a node whose processes partly run elsewhere: the same request (the
 * caller's credential, the hop header: each node answers from itself) to this node and to every
 * other live node owning one of them, in parallel, merged by `mergeLists`. This node's answer
 * decides the status: an error (401, 400) is passed on as it is.
 */
export async function answerList(o: {
  http: HttpProxy;
  request: FastifyRequest;
  reply: FastifyReply;
  self: Upstream;
  owners: ReadonlyMap<string, Upstream>;
  headers: (to: Upstream, method: string, url: string) => OutgoingHttpHeaders;
}): Promise<void> {
  const nodes = new Map<string, Upstream>();
  for (const up of o.owners.values()) nodes.set(up.node, up);
  const url = o.request.url;
  const ask = (to: Upstream) => o.http.fetch(to, url, { ...o.request.headers, ...o.headers(to, 'GET', url) });
  const [mine, ...theirs] = await Promise.all([ask(o.self), ...[...nodes.values()].map((n) => ask(n).catch(() => undefined))]);
  const own = mine.status === 200 ? parseList(mine.body) : undefined;
  if (!own) {
    o.reply.code(mine.status).header('content-type', mine.type ?? 'application/json').send(mine.body);
    return;
  }
  const lists = new Map<string, Listed[]>();
  [...nodes.keys()].forEach((node, i) => {
    const r = theirs[i];
    const list = r?.status === 200 ? parseList(r.body) : undefined;
    if (list) lists.set(node, list);
  });
  const owners = new Map([...o.owners].map(([id, up]) => [id, up.node]));
  o.reply.code(200).type('application/json; charset=utf-8').send(mergeLists(own, owners, lists));
}

function parseList(body: Buffer): Listed[] | undefined {
  try {
    const v: unknown = JSON.parse(body.toString('utf8'));
    return Array.isArray(v) ? v as Listed[] : undefined;
  } catch {
    return undefined;
  }
}

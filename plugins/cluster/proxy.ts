import type { OutgoingHttpHeaders } from 'node:http';
import type { FilesystemService, ForwardInput } from '../../sdk/index.ts';
import { CLIENT_HEADER, HOP_HEADER, type PeerKey } from './peer.ts';
import { HttpProxy, proxyErrors, readBody, type Upstream } from './proxy-http.ts';
import { FileLocator } from './proxy-files.ts';
import { answerList, isProcessList } from './proxy-list.ts';
import type { ClusterView } from './schema.ts';

/** What the proxy reads of its node: the live view (nodes, assignments) and its own id. */
export interface ProxyNode {
  readonly id: string;
  view(): ClusterView;
}

const PROCESS_PREFIX = '/api/v3/process/';

/**
 * One API on every node (the `forward` tap). A request for one process (`/api/v3/process/{id}`
 * and below, any method) whose owner in `core_assign` is another live node goes to that node;
 * a GET/HEAD of a file the local filesystems do not have goes to the node that has it. Both
 * carry the hop header (the receiver never proxies again) and the client's address signed with
 * the cluster key (`peer.ts`). An unknown owner, this node, or an owner that left the live view:
 * the request is handled here. Nothing is proxied before the key is read.
 */
export class ClusterProxy {
  #node: ProxyNode;
  #key: PeerKey;
  #http = new HttpProxy();
  #files: FileLocator;

  constructor(node: ProxyNode, key: PeerKey, filesystems: () => readonly FilesystemService[]) {
    this.#node = node;
    this.#key = key;
    this.#files = new FileLocator(filesystems, this.#http);
  }

  /** The tap: true when the request was answered by another node. */
  async forward({ request, reply, api }: ForwardInput): Promise<true | undefined> {
    if (request.headers[HOP_HEADER] !== undefined) {
      // passed on by another node: answered here, but only once its client address could be checked
      if (!this.#key.ready) throw proxyErrors.notReady();
      return undefined;
    }
    if (!this.#key.ready) return undefined;
    const url = request.url;
    let to: Upstream | undefined;
    if (api) {
      if (isProcessList(request.method, url)) return this.#list(request, reply);
      if (!url.startsWith(PROCESS_PREFIX)) return undefined;
      const id = processIdOf(url);
      to = id === undefined ? undefined : this.#ownerOf(id);
    } else if (request.method === 'GET' || request.method === 'HEAD') {
      to = await this.#files.holder(request, {
        peers: () => this.#peers(), owners: () => this.#owners(), headers: (peer, u) => this.#headers(request, peer, 'HEAD', u),
      });
    }
    if (!to) return undefined;
    const target = to;
    // the signature covers the body, so it is read whole first (bounded by the route's body limit)
    const body = await readBody(request);
    await this.#http.forward(target, request, reply, () => this.#headers(request, target, request.method, url, body), body);
    return true;
  }

  /** The list, merged from the owners' lists when some processes run elsewhere (`proxy-list.ts`). */
  async #list(request: ForwardInput['request'], reply: ForwardInput['reply']): Promise<true | undefined> {
    const owners = this.#owners();
    const self = this.#node.view().nodes.find((n) => n.id === this.#node.id);
    if (owners.size === 0 || !self) return undefined;
    await answerList({
      http: this.#http, request, reply, owners, self: { node: self.id, base: self.api_address },
      headers: (to, method, url) => this.#headers(request, to, method, url),
    });
    return true;
  }

  /** The live node other than this one that `core_assign` gives process `id` to. */
  #ownerOf(id: string): Upstream | undefined {
    const v = this.#node.view();
    const node = v.assignments.find((a) => a.process_id === id)?.node_id;
    if (node === undefined || node === this.#node.id) return undefined;
    const live = v.nodes.find((n) => n.id === node);
    return live ? { node, base: live.api_address } : undefined;
  }

  /** Processes assigned to other live nodes, for files named after their process. */
  #owners(): Map<string, Upstream> {
    const v = this.#node.view();
    const live = new Map(v.nodes.filter((n) => n.id !== this.#node.id).map((n) => [n.id, n.api_address]));
    const out = new Map<string, Upstream>();
    for (const a of v.assignments) {
      const base = live.get(a.node_id);
      if (base !== undefined) out.set(a.process_id, { node: a.node_id, base });
    }
    return out;
  }

  /** The other live nodes, for files no process id names. */
  #peers(): Upstream[] {
    return this.#node.view().nodes.filter((n) => n.id !== this.#node.id).map((n) => ({ node: n.id, base: n.api_address }));
  }

  /** Hop and signed client headers for one request to `to` (a new nonce each time). */
  #headers(request: ForwardInput['request'], to: Upstream, method: string, url: string, body?: Buffer): OutgoingHttpHeaders {
    const ip = request.clientAddress ?? request.socket?.remoteAddress ?? '';
    const xff = request.headers['x-forwarded-for'];
    return {
      [HOP_HEADER]: this.#node.id,
      [CLIENT_HEADER]: this.#key.sign({ ip, https: request.protocol === 'https', method, url, node: to.node, body }),
      // informational: the owner's door and front door judge the signed address (a serving thread
      // there that cannot check it passes a request with this header to main)
      'x-forwarded-for': xff ? `${Array.isArray(xff) ? xff.join(', ') : xff}, ${ip}` : ip,
    };
  }

  close(): void { this.#http.close(); }
}

/** The process id of `/api/v3/process/{id}[/...][?...]`, URL-decoded; undefined when malformed. */
export function processIdOf(url: string): string | undefined {
  const rest = url.slice(PROCESS_PREFIX.length);
  let end = rest.length;
  for (const c of ['/', '?']) { const i = rest.indexOf(c); if (i >= 0 && i < end) end = i; }
  if (end === 0) return undefined;
  try { return decodeURIComponent(rest.slice(0, end)); } catch { return undefined; }
}

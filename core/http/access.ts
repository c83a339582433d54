import type { FastifyRequest } from 'fastify';
import { httpErrors, isLoopback, type ApiError } from '../../sdk/index.ts';
import type { RouteAccess } from '../../sdk/http.ts';
import type { ApiConfig } from '../../sdk/config/sections-a.ts';
import { THREAD_PEER_HEADER, isServingThreadSocket } from '../door/threads/module.ts';
import { AccessList, resolveClientAddress } from './client-address.ts';
import { CidrSet } from '../../sdk/client-address.ts';
import { takeThreadPeer, type ThreadPeer } from '../door/threads/peer-header.ts';

/** The front door's refusals; bodies as the reference (1.1) and the former auth plugin answered. */
export const accessErrors = {
  /** The client address is not allowed by `api.access.*` (reference 1.1). */
  forbiddenAddress: () => httpErrors.forbidden(['Forbidden'], 'ACCESS_ADDRESS_FORBIDDEN'),
  /** `api.read_only` refuses every call that changes state. */
  readOnly: () => httpErrors.forbidden(['The API is read-only (api.read_only)'], 'ACCESS_READ_ONLY'),
};


/**
 * What the core enforces on every route, whatever plugins are loaded: the client address
 * (trusted proxies), the `api.access` IP lists and `api.read_only`. Authentication is not here:
 * it is the `authorize` hook's (the auth plugin's).
 */
export class FrontDoorAccess {
  readonly #http: AccessList;
  readonly #https: AccessList;
  readonly #trusted: CidrSet;
  readonly #readOnly: boolean;
  readonly #threadKey: Buffer | undefined;
  /** Told once when a local peer sends forwarding headers nobody trusts (a proxy left out of the config). */
  #untrustedProxy: ((peer: string) => void) | undefined;

  /**
   * `threadKey`: the serving threads' per-boot key (their forwarded requests carry the client's
   * peer); `untrustedProxy`: called once for a loopback peer whose X-Real-IP / X-Forwarded-For
   * were ignored (not in `api.access.trusted_proxies`).
   */
  constructor(api: Pick<ApiConfig, 'read_only' | 'access'>, threadKey?: Buffer, untrustedProxy?: (peer: string) => void) {
    this.#threadKey = threadKey;
    this.#untrustedProxy = untrustedProxy;
    this.#http = new AccessList(api.access.http);
    this.#https = new AccessList(api.access.https);
    // none by default: forwarding headers from anyone else would let a client pick its address
    this.#trusted = new CidrSet(api.access.trusted_proxies ?? []);
    this.#readOnly = api.read_only;
  }

  /** Resolves the client address once and keeps it on the request (`clientAddress` in the SDK). */
  address(request: FastifyRequest): string {
    const vouched = this.#threadPeer(request);
    if (request.clientAddress !== undefined) return request.clientAddress;
    const address = resolveClientAddress(request, this.#trusted, vouched?.address);
    request.clientAddress = address;
    if (this.#untrustedProxy && isLoopback(address) && !this.#trusted.has(address)
      && (request.headers['x-real-ip'] !== undefined || request.headers['x-forwarded-for'] !== undefined)) {
      this.#untrustedProxy(address);
      this.#untrustedProxy = undefined;
    }
    return address;
  }

  /**
   * The client a serving thread vouches for, the thread header removed (also when a `peer` tap,
   * the cluster's, named the client already: no route ever sees the header). Believed only on the
   * loopback connections of the internal listener the threads forward to: sent to a public port
   * (a header seen once, replayed), it is stripped and counts for nothing (threads/peer-header.ts).
   */
  #threadPeer(request: FastifyRequest): ThreadPeer | undefined {
    if (request.headers[THREAD_PEER_HEADER] === undefined) return undefined;
    const fromThread = isServingThreadSocket(request.raw.socket);
    const vouched = takeThreadPeer(request.headers, fromThread ? this.#threadKey : undefined, request.method, request.url);
    // a thread's HTTPS listener forwards over plain loopback: the request is HTTPS for every
    // route, hook and plugin (`request.protocol`), on the signature's word only
    if (vouched?.https) Object.defineProperty(request, 'protocol', { value: 'https', enumerable: true });
    return vouched;
  }

  /**
   * The IP lists, for every route that is not `public` (the API tree, `network` routes such as
   * `/metrics`; not login, swagger, `/ping` or the file mounts, as in the reference), CORS
   * preflights included.
   */
  checkAddress(request: FastifyRequest, access: RouteAccess): ApiError | undefined {
    if (access === 'public') return undefined;
    const list = request.protocol === 'https' ? this.#https : this.#http;
    return list.allows(this.address(request)) ? undefined : accessErrors.forbiddenAddress();
  }

  /**
   * `api.read_only`, after authentication (a caller without token learns 401 first): a known,
   * non-public route that changes state is refused; an unknown route stays a 404.
   */
  checkReadOnly(request: FastifyRequest, access: RouteAccess, mutating: boolean): ApiError | undefined {
    if (!this.#readOnly || access === 'public' || !mutating || request.is404) return undefined;
    return accessErrors.readOnly();
  }
}

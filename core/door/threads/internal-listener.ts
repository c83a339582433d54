import { createServer, type Server as NetServer, type Socket } from 'node:net';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { markServingThreadSocket } from './module.ts';

/**
 * The loopback port serving threads forward to. It hands each connection to the current app's
 * HTTP server (the same routes, hooks and front door as the public port); during a reload there
 * is none for a moment, and a connection is closed (the thread answers 502).
 */
export class InternalListener {
  #server: NetServer | undefined;
  #target: Server | undefined;
  port = 0;

  set target(server: Server | undefined) { this.#target = server; }

  async open(): Promise<number> {
    if (this.#server) return this.port;
    const server = createServer((socket: Socket) => {
      const target = this.#target;
      // the client's bytes are counted on the thread: traffic accounting skips this hop
      markServingThreadSocket(socket);
      if (target?.listening) target.emit('connection', socket);
      else socket.destroy();
    });
    this.#server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: '127.0.0.1', port: 0 }, () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    return this.port;
  }

  async close(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

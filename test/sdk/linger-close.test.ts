import t from 'tap';
import { PassThrough } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { lingerClose } from '../../sdk/linger-close.ts';

/*
 * A refusal answered before the body is read lingers on the connection (linger-close.ts). An
 * injected request (light-my-request, the test kit) has a stand-in socket with no `destroy`: the
 * door's refusal of such an upload threw from the linger timer 5 s later, an uncaught exception
 * that ended a test app's process (memfs/entries in a loaded suite run).
 */
t.test('a stand-in socket (an injected request): nothing lingers, nothing throws later', async (t) => {
  const req = new PassThrough() as unknown as IncomingMessage;
  // light-my-request's stand-in: events, an address, no destroy
  const standIn = { remoteAddress: '127.0.0.1', once: () => standIn, on: () => standIn } as unknown as Socket;
  let thrown: unknown;
  const onUncaught = (err: unknown) => { thrown = err; };
  process.on('uncaughtException', onUncaught);
  t.teardown(() => { process.off('uncaughtException', onUncaught); });
  lingerClose(req, standIn, { maxBytes: 10, maxMs: 20 });
  await new Promise((r) => setTimeout(r, 100));
  t.equal(thrown, undefined, 'no TypeError from the linger timer');
});

import {
  ingestHooksRef, processHooksRef, type EventsService, type IngestPeer, type IngestTraffic, type PluginHooks,
} from '../../sdk/index.ts';

/**
 * Turns the process engine's and the ingest hooks into events. The taps only emit (which only
 * records): the engine and the ingest sockets never wait for a subscriber.
 */
export function tapEmitters(hooks: PluginHooks, bus: EventsService): void {
  const proc = (id: string, reference: string) => ({ process: id, reference });
  hooks.tap(processHooksRef, 'onStateChange', async (ev) => {
    const subject = proc(ev.id, ev.reference);
    bus.emit('process.state', subject, {
      from: ev.from, to: ev.to, reason: ev.reason, cause: ev.cause, last_logline: ev.lastLogline ?? '',
    });
    if (ev.to === 'starting' && ev.cause === 'reconnect') bus.emit('process.reconnect', subject);
    else if (ev.to === 'killed' && (ev.cause === 'stale' || ev.cause === 'limit')) bus.emit(`process.${ev.cause}`, subject, { reason: ev.reason });
  });
  hooks.tap(processHooksRef, 'onSchedule', async (ev) => {
    bus.emit('process.scheduled', proc(ev.id, ev.reference), { next_run: ev.nextRun });
  });
  hooks.tap(processHooksRef, 'onDemand', async (ev) => {
    bus.emit(`process.demand.${ev.action}`, proc(ev.id, ev.reference), { reason: ev.reason, readers: ev.readers });
  });
  hooks.tap(processHooksRef, 'onBudget', async (ev) => {
    bus.emit(`process.budget.${ev.action}`, proc(ev.id, ev.reference), { start: ev.start, reason: ev.reason });
  });
  hooks.tap(processHooksRef, 'onAdd', async (ev) => { bus.emit('process.added', proc(ev.id, ev.reference)); });
  hooks.tap(processHooksRef, 'onUpdate', async (ev) => {
    bus.emit('process.updated', proc(ev.id, ev.reference), { previous_id: ev.previousId });
  });
  hooks.tap(processHooksRef, 'onDelete', async (ev) => { bus.emit('process.deleted', proc(ev.id, ev.reference)); });

  const peer = (p: IngestPeer) => ({ stream: p.stream, peer: p.id, protocol: p.protocol });
  const ended = (p: IngestPeer, t: IngestTraffic) => ({ remote: p.remote, rx_bytes: t.rxBytes, tx_bytes: t.txBytes });
  hooks.tap(ingestHooksRef, 'onPublish', (p) => bus.emit('ingest.publish.start', peer(p), { remote: p.remote }));
  hooks.tap(ingestHooksRef, 'onPublishEnd', (p, t) => bus.emit('ingest.publish.stop', peer(p), ended(p, t)));
  hooks.tap(ingestHooksRef, 'onPlay', (p) => bus.emit('ingest.play.start', peer(p), { remote: p.remote }));
  hooks.tap(ingestHooksRef, 'onPlayEnd', (p, t) => bus.emit('ingest.play.stop', peer(p), ended(p, t)));
}

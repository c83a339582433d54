import type { EventTypeDeclaration } from '../../sdk/index.ts';

/*
 * The events this plugin emits itself (its definition's `events`): the service's life and the
 * stream's synthetic ones. The process and ingest events it makes of the core's hooks are the
 * core's declarations.
 */
export const OWN_EVENTS: readonly EventTypeDeclaration[] = [
  { type: 'config.reloaded', subject: [], description: 'The service was rebuilt from the stored configuration.', payload: {} },
  { type: 'service.started', subject: [], description: 'The service is listening (once per run of the program).', payload: { port: 'HTTP port' } },
  { type: 'service.stopping', subject: [], description: 'The service is stopping (for good or for a reload).', payload: {} },
  { type: 'events.lost', subject: [], description: 'Synthetic, first on a resumed stream: the events after the given id are no longer held.', payload: {
    last_event_id: 'the id the client resumed from', oldest_id: 'the oldest id still held (`<boot>-<id>`)',
  } },
  { type: 'events.overflow', subject: [], description: 'Synthetic, last on a stream: the client read too slowly and is dropped.', payload: {
    queued_bytes: 'bytes waiting for the client', limit_bytes: 'the bound',
  } },
];

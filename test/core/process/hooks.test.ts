import { fileURLToPath } from 'node:url';
import t from 'tap';
import { startApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';
import { addProcess, nullProcess, state, waitState } from './helpers.ts';

const FIXTURE = fileURLToPath(new URL('./fixtures/hooks-plugin.ts', import.meta.url));

t.test('process hooks: preStart rewrites and vetoes, on* notify', async (t) => {
  const app = await startApp(t, { config: { plugins: ['*', FIXTURE] } });
  const events = async () => (await app.request('GET', '/test/process-events')).body;

  await addProcess(app, nullProcess('rw', { autostart: true, reference: 'rewrite' }));
  const s = await waitState(app, 'rw', (x) => x.exec === 'running' && x.progress.frame > 0, 'running');
  t.equal(s.command[0], '-hide_banner', 'the rewritten argv is what runs');
  const rep = (await app.request('GET', '/api/v3/process/rw/report')).body;
  t.notOk(rep.prelude.some((l: string) => l.startsWith('ffmpeg version')), 'ffmpeg ran with it (no banner)');
  await waitFor(async () => (await events()).progress > 0, { what: 'onProgress' });

  await addProcess(app, nullProcess('no', { autostart: true, reference: 'veto' }));
  const vetoed = await waitState(app, 'no', (x) => x.exec === 'failed', 'failed by the veto');
  t.match(vetoed.last_logline, /vetoed: reference is blocked/, 'the reason shows in the state');
  const noRep = (await app.request('GET', '/api/v3/process/no/report')).body;
  t.ok(noRep.log.some((e: string[]) => /reference is blocked/.test(e[1]!)), 'and in the report');
  t.equal(vetoed.order, 'start');

  const ev = await events();
  const rwStates = ev.states.filter((e: { id: string }) => e.id === 'rw').map((e: { from: string; to: string }) => `${e.from}>${e.to}`);
  t.same(rwStates.slice(0, 2), ['finished>starting', 'starting>running']);
  t.ok(ev.states.some((e: { id: string; to: string; reason?: string }) => e.id === 'no' && e.to === 'failed' && /blocked/.test(e.reason ?? '')));
  t.same(ev.listed.sort(), [['no', 'failed'], ['rw', 'running']], 'the processes service lists them');

  t.equal((await app.request('DELETE', '/api/v3/process/rw')).status, 200);
  t.same((await events()).deleted, ['rw'], 'onDelete');
  t.equal((await state(app, 'no')).exec, 'failed');
  t.same((await events()).changed, ['add rw', 'add no'], 'onAdd');
  const put = await app.request('PUT', '/api/v3/process/no', { body: { id: 'no2' } });
  t.equal(put.status, 200);
  t.same((await events()).changed, ['add rw', 'add no', 'update no>no2'], 'onUpdate, with the id before');
});

t.test('process hooks: preSave refuses an add or update with its reason, a throwing tap does not', async (t) => {
  const app = await startApp(t, { config: { plugins: ['*', FIXTURE] } });
  const events = async () => (await app.request('GET', '/test/process-events')).body;

  const refused = await app.request('POST', '/api/v3/process', { body: nullProcess('rs', { reference: 'refuse-save' }) });
  t.equal(refused.status, 400);
  t.match(refused.body.details?.join?.(' ') ?? JSON.stringify(refused.body), /reference 'refuse-save' is not saved here \(inputs: in\)/, 'the tap\'s reason in the Error');
  t.equal((await app.request('GET', '/api/v3/process/rs')).status, 404, 'nothing was added');

  t.equal((await app.request('POST', '/api/v3/process', { body: nullProcess('ok', { reference: 'fine' }) })).status, 200);
  const put = await app.request('PUT', '/api/v3/process/ok', { body: { reference: 'refuse-save' } });
  t.equal(put.status, 400, 'an update refused');
  t.equal((await app.request('GET', '/api/v3/process/ok/config')).body.reference, 'fine', 'the process kept its config');

  t.equal((await app.request('POST', '/api/v3/process', { body: nullProcess('th', { reference: 'throw-save' }) })).status, 200, 'a throwing tap is logged and ignored');
  t.equal((await app.request('PUT', '/api/v3/process/ok', { body: { id: 'ok2' } })).status, 200);
  t.same((await events()).saved, ['->ok', 'ok>ok2'], 'taps see the id before a rename');
});

import t from 'tap';
import type { IngestPeer } from '../../../sdk/index.ts';
import { Streams } from '../../../core/streams/table.ts';

/*
 * The stream table's demand sources in-process: `whenPublished` asks them and waits for the
 * publisher, `demandNames` joins their waiting names (a failing source is skipped), and
 * `demandChanged` calls the change listeners with the live names.
 */

const peer: IngestPeer = { id: 'p-1', protocol: 'rtmp', stream: 'cam', remote: '127.0.0.1:1', params: {}, traffic: () => ({ rxBytes: 0, txBytes: 0 }) };

t.test('demandNames joins the sources, demandChanged tells the listeners', async (t) => {
  const table = new Streams();
  t.same(table.demandNames(), [], 'no source, no names');
  let waiting = ['cam', 'door'];
  const off = table.addDemandSource({ demand: () => false, waiting: () => waiting });
  table.addDemandSource({ demand: () => false, waiting: () => ['door', 'gate'] });
  table.addDemandSource({ demand: () => false });
  table.addDemandSource({ demand: () => false, waiting: () => { throw new Error('broken source'); } });
  t.same(table.demandNames().sort(), ['cam', 'door', 'gate'], 'each name once, a source without waiting() or a failing one adds none');
  const told: string[][] = [];
  table.onChange((names) => told.push([...names]));
  waiting = [];
  table.demandChanged();
  t.same(told, [[]], 'the listeners hear it with the live names');
  t.same(table.demandNames().sort(), ['door', 'gate']);
  off();
  t.same(table.demandNames().sort(), ['door', 'gate'], 'a removed source adds none');
});

t.test('demandNames(\'running\'): the names whose publisher a demand started', async (t) => {
  const table = new Streams();
  table.addDemandSource({ demand: () => false, waiting: () => ['cam'], running: () => ['door'] });
  table.addDemandSource({ demand: () => false, waiting: () => ['gate'] });
  table.addDemandSource({ demand: () => false, running: () => { throw new Error('broken source'); } });
  t.same(table.demandNames('running'), ['door'], 'only the running ones, a failing source skipped');
  t.same(table.demandNames('waiting').sort(), ['cam', 'gate'], 'waiting is the default');
});

t.test('whenPublished: a source that starts a publisher, one that does not', async (t) => {
  const table = new Streams();
  const asked: string[] = [];
  table.addDemandSource({
    demand: (name) => {
      asked.push(name);
      if (name !== 'cam') return false;
      setTimeout(() => { const r = table.publish('cam', 'mpegts', peer, { internal: true }); if (r.ok) t.teardown(() => r.handle.end()); }, 20);
      return true;
    },
  });
  t.equal(await table.whenPublished('none', 1000), false, 'no source publishes it: false at once');
  t.equal(await table.whenPublished('cam', 5000), true, 'the source published it');
  t.equal(await table.whenPublished('cam'), true, 'live: true without asking');
  t.same(asked, ['none', 'cam']);
});

t.test('whenPublished hands the reader\'s address to the sources, which may refuse it', async (t) => {
  const table = new Streams();
  const asked: Array<[string, string | undefined]> = [];
  table.addDemandSource({ demand: (name, from) => { asked.push([name, from]); return from !== '203.0.113.9:4000'; } });
  t.equal(await table.whenPublished('cam', 50, '203.0.113.9:4000'), false, 'refused: false at once');
  t.equal(await table.whenPublished('cam', 50, '198.51.100.1:4000'), false, 'admitted, but nothing published within the wait');
  t.equal(await table.whenPublished('cam', 50), false);
  t.same(asked, [['cam', '203.0.113.9:4000'], ['cam', '198.51.100.1:4000'], ['cam', undefined]], 'each source got the address, none for a reader inside the service');
});

import t from 'tap';
import { Placeholders } from '../../../core/process/placeholder-registry.ts';
import { escape, substitute, WHERE } from '../../../core/process/placeholders.ts';
import { assemble, resolveProcess } from '../../../core/process/command.ts';
import { normalize } from '../../../core/process/config-model.ts';
import { accessList, checkOutput } from '../../../core/process/validate.ts';

function registry(): Placeholders {
  const r = new Placeholders();
  r.register({ name: 'diskfs', aliases: ['fs:disk'], contexts: ['global', 'address', 'options'], value: () => '/mnt/diskfs' });
  r.register({ name: 'memfs', aliases: ['fs:mem'], contexts: ['address', 'options'], value: () => 'http://localhost/mnt/memfs' });
  r.register({ name: 'rtmp', contexts: ['address'], value: () => 'rtmp://localhost/app/{name}?token=foobar' });
  r.register({
    name: 'srt', contexts: ['address'], defaults: { latency: '20000' },
    value: (section) => `srt://localhost:6000?mode=caller&transtype=live&latency={latency}&streamid={name},mode:${section === 'output' ? 'publish' : 'request'}`,
  });
  r.register({ name: 'tpl', contexts: ['address', 'options'], defaults: { b: 'B' }, value: () => '{a}-{b}-{c}' });
  return r;
}

t.test('escaping with ^ (reference 8.1)', async (t) => {
  t.equal(escape('a:b\\c', ':'), 'a\\\\:b\\\\\\c');
  t.equal(escape('a\\b', '\\'), 'a\\\\\\b');
  const r = registry();
  const vars = { processid: 'p', reference: 'r' };
  t.equal(substitute('{memfs^:}/x', WHERE.outputAddress, vars, r), 'http\\\\://localhost/mnt/memfs/x');
  t.equal(substitute('{foobar}', WHERE.outputAddress, vars, r), '{foobar}', 'unknown names stay');
  t.equal(substitute('{foobar^}', WHERE.outputAddress, vars, r), '{foobar^}');
  t.equal(substitute('{foobar^:.}', WHERE.outputAddress, vars, r), '{foobar^:.}');
  t.equal(substitute('[{reference}]', WHERE.outputAddress, { processid: 'p', reference: '' }, r), '[]', 'empty value -> empty string');
});

t.test('templates, parameters, defaults, $variables', async (t) => {
  const r = registry();
  const vars = { processid: 'pid', reference: 'ref', inputid: 'in1' };
  t.equal(substitute('{tpl,a=1,c=3}', WHERE.inputAddress, vars, r), '1-B-3');
  t.equal(substitute('{tpl,a=E%3dmc^2}', WHERE.inputAddress, vars, r), 'E=mc^2-B-{c}', 'params are URL-unescaped; missing slots stay');
  t.equal(substitute('{tpl^-,a=x}', WHERE.inputAddress, vars, r), 'x\\\\-B\\\\-{c}', 'escaping after expansion');
  t.equal(substitute('{tpl,a=$processidxxx,c=$inputid}', WHERE.inputAddress, vars, r), 'pidxxx-B-in1');
  t.equal(substitute('-x $inputid {inputid}', WHERE.inputOptions, vars, r), '-x $inputid in1', '$vars only inside params');
  t.equal(substitute('{rtmp,name=$inputid}', WHERE.inputOptions, vars, r), '{rtmp,name=$inputid}', 'rtmp only in addresses');
  t.equal(substitute('{memfs}/x.txt', WHERE.global, vars, r), '{memfs}/x.txt', '{memfs} not in global options');
  t.equal(substitute('{diskfs}/x.txt', WHERE.global, vars, r), '/mnt/diskfs/x.txt');
  t.equal(substitute('{fs:disk}', WHERE.global, vars, r), '/mnt/diskfs');
  t.equal(substitute('{processid}', WHERE.global, vars, r), '{processid}', 'no IDs in global options');
  t.equal(substitute('{rtmp,name=x}', WHERE.cleanup, vars, r), '{rtmp,name=x}', 'nothing but IDs in cleanup patterns');
  // each `{` scanned the rest for its `}` (quadratic: `{a,` x 40,000 took 9 s); the same answers
  const open = '{a,'.repeat(100_000);
  t.equal(substitute(open, WHERE.inputAddress, vars, r), open, 'no } at all');
  t.equal(substitute(`x{inputid}${open}`, WHERE.inputAddress, vars, r), `xin1${open}`, 'up to the last }, then the rest as it is');
  t.equal(substitute('{tpl,a=1}{tpl,a=2,c=}', WHERE.inputAddress, vars, r), '1-B-{c}2-B-');
});

t.test('the reference example (8.2)', async (t) => {
  const r = registry();
  const c = normalize({
    id: '314159265359', reference: 'refref',
    input: [{ id: 'in_{processid}_{reference}', address: '{rtmp,name=$inputid}', options: ['-f', '{inputid}', '{memfs}'] }],
    output: [{ id: 'out_{processid}', address: '{srt,name=$reference,latency=42}', options: ['-metadata', '{outputid}'],
      cleanup: [{ pattern: 'mem:/{outputid}_*.ts' }] }],
    // option values, not bare arguments: a bare argument would be an output (paths-adversarial.test.ts)
    options: ['-metadata', '{memfs}/x.txt', '-metadata', '{diskfs}/y'],
  });
  const res = resolveProcess(c, {
    registry: r, lookup: () => undefined,
    validator: { input: accessList({ allow: [], block: [] }, 'i'), output: accessList({ allow: [], block: [] }, 'o'), diskRoot: '/mnt/diskfs' },
  });
  if (typeof res === 'string') throw new Error(res);
  t.equal(res.inputs[0]!.id, 'in_314159265359_refref');
  t.equal(res.inputs[0]!.address, 'rtmp://localhost/app/in_314159265359_refref?token=foobar');
  t.same(res.inputs[0]!.options, ['-f', 'in_314159265359_refref', 'http://localhost/mnt/memfs']);
  t.equal(res.outputs[0]!.address, 'srt://localhost:6000?mode=caller&transtype=live&latency=42&streamid=refref,mode:publish');
  t.same(res.cleanup.map((x) => x.pattern), ['mem:/out_314159265359_*.ts']);
  t.same(res.options, ['-metadata', '{memfs}/x.txt', '-metadata', '/mnt/diskfs/y']);
  t.same(res.command, ['-metadata', '{memfs}/x.txt', '-metadata', '/mnt/diskfs/y', '-f', 'in_314159265359_refref', 'http://localhost/mnt/memfs', '-i',
    'rtmp://localhost/app/in_314159265359_refref?token=foobar', '-metadata', 'out_314159265359',
    'srt://localhost:6000?mode=caller&transtype=live&latency=42&streamid=refref,mode:publish']);
});

t.test('command assembly (restream/app)', async (t) => {
  t.same(assemble(['-global', 'global'], [{ id: 'i', address: 'inputAddress', options: ['-input', 'inputoption'], cleanup: [] }],
    [{ id: 'o', address: 'outputAddress', options: ['-output', 'oututoption'], cleanup: [] }]),
  ['-global', 'global', '-input', 'inputoption', '-i', 'inputAddress', '-output', 'oututoption', 'outputAddress']);
});

t.test('output address table (8.4)', async (t) => {
  const v = { input: accessList({ allow: [], block: [] }, 'i'), output: accessList({ allow: [], block: [] }, 'o'), diskRoot: '/core/data' };
  const table: [string, boolean][] = [
    ['/dev/null', true], ['/etc/passwd', false], ['/core/data/../../etc/passwd', false], ['file:/core/data/foobar', true], ['-', true],
    ['/core/data/foobar|/etc/passwd', false], ['[f=mpegts]udp://10.0.1.255:1234/', true],
    ['[onfail=ignore]/core/data/a.mkv|[f=mpegts]udp://10.0.1.255:1234/', true], ['/core/database/x', false],
  ];
  for (const [address, ok] of table) {
    t.equal(checkOutput(v, 'p', { id: 'o', address, options: [], cleanup: [] }) === undefined, ok, address);
  }
  const httpOnly = { ...v, output: accessList({ allow: ['^https?://', '^rtmp://'], block: [] }, 'o') };
  t.equal(checkOutput(httpOnly, 'p', { id: 'o', address: '[f=hls]http://a/b|[f=flv]rtmp://c/d', options: [], cleanup: [] }), undefined);
  t.match(checkOutput(httpOnly, 'p', { id: 'o', address: '/dev/null', options: [], cleanup: [] }), /address is not allowed/);
  t.throws(() => accessList({ allow: ['('], block: [] }, 'encoder.access.input'), /encoder\.access\.input\.allow\[0\]/);
});

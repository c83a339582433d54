import t from 'tap';
import { paramFiles } from '../../../core/process/encoder-params.ts';
import { scanOptions, type OptionChecks } from '../../../core/process/option-scan.ts';

// a stand-in for the validator: everything outside /disk is refused
const checks: OptionChecks = {
  output: (a) => (a.startsWith('/disk/') ? undefined : `${a} is outside`),
  input: () => undefined,
  relative: () => undefined,
};

t.test('files an encoder library writes are found in its parameter list', async (t) => {
  t.same(paramFiles('keyint=50:scenecut=0'), { writes: [], others: ['50', '0'] });
  t.same(paramFiles('pass=1:stats=/disk/a.log'), { writes: ['/disk/a.log'], others: ['1'] });
  t.same(paramFiles('dump_yuv=/x.yuv'), { writes: ['/x.yuv'], others: [] }, "'_' is '-' for the library");
  t.same(paramFiles(' Stats = /x.log '), { writes: ['/x.log'], others: [] }, 'spaces and case do not hide a key');
  t.same(paramFiles('csv=/x.csv:analysis-save=/y'), { writes: ['/x.csv', '/y'], others: [] }, 'x265 keys');
  t.same(paramFiles('cqmfile=/etc/x.cqm'), { writes: [], others: [] }, 'files read are allowed');
  for (const bad of ["'stats'=x.log", 'stats=a\\:b', 'nostats=1', 'no-dump-yuv=1', 'pass=1', 'pass=2:keyint=5', 'stats=']) {
    t.ok('refused' in paramFiles(bad), `${bad}: refused`);
  }
});

t.test('option lists: parameter files are outputs; 2-pass needs -passlogfile', async (t) => {
  const refused: string[][] = [
    ['-x264-params', 'stats=/tmp/x.log'],
    ['-x264-params:v', 'pass=1:stats=x.log'],
    ['-x264opts', 'stats=/tmp/x.log'],
    ['-x265-params', 'csv=/tmp/x.csv'],
    ['-svtav1-params', 'tune=0:foo=/tmp/x'],
    ['-x264-params', 'pass=1'],
    ['-c:v', 'libx264', '-pass', '1'],
    ['-c:v', 'libx264', '-flags', '+pass1'],
    ['-pass', '1', '-passlogfile', '/tmp/p'],
  ];
  for (const opts of refused) t.type(scanOptions(opts, checks), 'string', `${opts.join(' ')}: refused`);
  const passed: string[][] = [
    ['-c:v', 'libx264', '-x264-params', 'keyint=50:min-keyint=50:scenecut=0'],
    ['-x264-params', 'pass=1:stats=/disk/x.log'],
    ['-x265-params', 'log-level=error:csv=/disk/x.csv'],
    ['-c:v', 'libx264', '-pass', '1', '-passlogfile', '/disk/p'],
    ['-flags', '+global_header'],
  ];
  for (const opts of passed) t.equal(scanOptions(opts, checks), undefined, `${opts.join(' ')}: passes`);
});

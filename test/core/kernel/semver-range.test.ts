import t from 'tap';
import { satisfies } from '../../../core/kernel/semver-range.ts';

t.test('ranges a plugin may declare for the SDK', async (t) => {
  const cases: [string, string, boolean | undefined][] = [
    ['1.0.0', '^1.0.0', true], ['2.0.0', '^1.0.0', false], ['1.5.2', '^1.2', true], ['0.2.5', '^0.2.1', true],
    ['0.3.0', '^0.2.1', false], ['0.0.4', '^0.0.3', false], ['1.0.0', '>=1 <2', true], ['1.0.0', '>= 1.0.0', true],
    ['1.0.0', '~1.0.3', false], ['1.0.4', '~1.0.3', true], ['1.1.0', '~1.0.3', false], ['1.0.0', '*', true],
    ['1.0.0', '1.x', true], ['1.0.0', '2.x || 1', true], ['1.0.0', '^2', false], ['1.0.0', '1.0.0', true],
    ['1.0.1', '1.0.0', false], ['1.0.0', '>1', false], ['1.0.0', '<=1', true], ['1.0.0', '<1', false],
    ['1.0.0', '^1.0.0-beta.1', true],
  ];
  for (const [v, r, want] of cases) t.equal(satisfies(v, r), want, `${v} in '${r}'`);
});

t.test('what is not a range says so instead of guessing', async (t) => {
  t.equal(satisfies('1.0.0', 'file:../sdk'), undefined);
  t.equal(satisfies('1.0.0', 'latest'), undefined);
  t.equal(satisfies('1.0', '^1.0.0'), undefined, 'the version must be complete');
});

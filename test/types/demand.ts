/**
 * Type tests of what the on-demand budget (issue 43) added to the SDK: a stream demand source
 * learns the reader's address, `whenPublished` passes it, and a file door refusal may carry
 * `Retry-After`. Checked by `tsc -p test/types`; nothing here runs.
 */
import type { FsServeRefusal, StreamDemandSource, StreamTable } from '@media-core/sdk';

/** True only when A and B are the same type (not merely assignable either way). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
function check<T extends true>(): T | void {}

// a source written before the address came still fits, and one that reads it gets `string | undefined`
const old: StreamDemandSource = { demand: (name) => name === 'cam1' };
const budgeted: StreamDemandSource = {
  demand: (name, from) => {
    check<Equal<typeof from, string | undefined>>();
    return name === 'cam1' && from !== '203.0.113.9:5000';
  },
};
void old;
void budgeted;

declare const table: StreamTable;
void table.whenPublished('cam1');
void table.whenPublished('cam1', undefined, '203.0.113.9:5000');
// @ts-expect-error the reader's address is a string
void table.whenPublished('cam1', 1000, 42);

const refusal: FsServeRefusal = { status: 429, message: 'Too Many Requests', details: ['later'], retryAfter: 5 };
check<Equal<FsServeRefusal['retryAfter'], number | undefined>>();
// @ts-expect-error seconds, a number
const wrong: FsServeRefusal = { status: 429, message: 'x', details: [], retryAfter: '5' };
void refusal;
void wrong;

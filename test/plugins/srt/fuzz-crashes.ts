import { TOKEN } from './srt-helpers.ts';
import { recordedHandshake, setSid, type FuzzCase } from './fuzz-gen.ts';
import { EXT, buildHandshake, type Handshake } from './fuzz-wire.ts';

/*
 * Inputs the SRT fuzz suite found that take the service down (libsrt 1.5.1, the Debian 12
 * package, with a passphrase set), reduced to one handshake each: the recorded publisher's
 * induction, then its conclusion (the service's SYN cookie patched in) with one change.
 * fuzz.test.ts replays each against a fresh service; a crash may show only at a later
 * allocation, so valid handshakes follow each.
 *
 * Not a fixed input yet (it depends on how much the service has sent): a subscriber's ACK that
 * acknowledges packets not sent yet. A request for a live stream (the recorded player's
 * conclusion), then about 1.5 s later an ACK (control type 2, 24-byte body) whose first word is
 * the handshake's initial sequence + 30..150 makes libsrt read past its send buffer and write
 * past its crypto buffer (CUDT::packData -> CCryptoControl::encrypt, valgrind): SIGSEGV in
 * CUDT::updateCC, CRcvUList::remove or CUDTUnited::close soon after. 25 such subscribers at
 * once (one offset each, 30 to 150 by 5) take the service down about two times in three; the
 * fuzz's `session` generator gets there in some 100 to 200 cases.
 */

export interface CrashInput {
  name: string;
  case: FuzzCase;
}

/** Induction, then the publisher's conclusion as `change` makes it (a name of its own). */
export function conclusionCase(name: string, change: (h: Handshake) => void = () => {}): FuzzCase {
  const { induction, conclusion } = recordedHandshake('publish');
  setSid(conclusion, Buffer.from(`${name},mode:publish,token:${TOKEN}`));
  change(conclusion);
  return {
    generator: 'crash',
    steps: [{ bytes: induction, awaitMs: 250, retry: true }, { bytes: buildHandshake(conclusion), cookie: true, awaitMs: 250 }],
    holdMs: 0,
  };
}

export const CRASH_INPUTS: CrashInput[] = [
  {
    // the answer (handshake, HSRSP, KMRSP) is written into a packet sized by the peer's MSS: a heap
    // overrun in CUDT::acceptAndRespond -> createSrtHandshake -> fillSrtHandshake (valgrind); any
    // MSS from about 50 to 150 does it; SIGABRT or SIGSEGV at a later allocation
    name: 'a publisher conclusion with MSS 76',
    case: conclusionCase('crash-mss', (h) => { h.mtu = 76; }),
  },
  {
    // a packet-filter (SRT_CMD_FILTER) block whose string is empty: SIGSEGV in SrtParseConfig
    // (CUDT::interpretSrtHandshake -> checkApplyFilterConfig -> ParseFilterConfig)
    name: 'a publisher conclusion with an empty packet-filter extension',
    case: conclusionCase('crash-filter', (h) => { h.exts.push({ type: EXT.filter, body: Buffer.alloc(4) }); }),
  },
];

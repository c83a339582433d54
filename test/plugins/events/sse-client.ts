import { get, type IncomingMessage } from 'node:http';
import { waitFor } from '../../helpers/wait.ts';

/** One parsed SSE block: the `id:` line and the JSON of `data:`. */
export interface SseEvent {
  sseId: string | undefined;
  id: number;
  boot: string;
  type: string;
  subject: Record<string, string>;
  payload: Record<string, any>;
}

/**
 * A plain SSE client over http.get, as a script or a dashboard would write one: it parses the
 * stream block by block, keeps every event and counts comment lines (heartbeats).
 */
export class SseClient {
  readonly events: SseEvent[] = [];
  comments = 0;
  status = 0;
  headers: IncomingMessage['headers'] = {};
  ended = false;
  res: IncomingMessage | undefined;
  #buf = '';
  #req: ReturnType<typeof get> | undefined;

  static async open(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
    const c = new SseClient();
    await new Promise<void>((resolve, reject) => {
      c.#req = get(url, { headers: { accept: 'text/event-stream', ...headers } }, (res) => {
        c.res = res;
        c.status = res.statusCode ?? 0;
        c.headers = res.headers;
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => c.#feed(chunk));
        res.on('end', () => { c.ended = true; });
        res.on('close', () => { c.ended = true; });
        res.on('error', () => { c.ended = true; });
        resolve();
      });
      c.#req.on('error', reject);
    });
    return c;
  }

  #feed(chunk: string): void {
    this.#buf += chunk;
    let i: number;
    while ((i = this.#buf.indexOf('\n\n')) >= 0) {
      const block = this.#buf.slice(0, i);
      this.#buf = this.#buf.slice(i + 2);
      let sseId: string | undefined;
      let data: string | undefined;
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) this.comments++;
        else if (line.startsWith('id: ')) sseId = line.slice(4);
        else if (line.startsWith('data: ')) data = line.slice(6);
      }
      if (data !== undefined) this.events.push({ sseId, ...JSON.parse(data) });
    }
  }

  /** Waits until `pred` holds for some event; returns it. */
  async next(pred: (e: SseEvent) => boolean, what: string, timeout = 30_000): Promise<SseEvent> {
    return waitFor(() => this.events.find(pred), { timeout, what });
  }

  /** The SSE id of the last event received. */
  lastId(): string {
    return this.events.at(-1)!.sseId!;
  }

  close(): void {
    this.#req?.destroy();
    this.res?.destroy();
  }
}

import { ClusterClient, ISession } from '../api';
import { SessionsModel } from '../sessions';
import { session } from './fixtures';

/** A client whose events stream is fed by the test. */
class FakeClient {
  streams = 0;
  feed: ((text: string) => void) | null = null;
  end: (() => void) | null = null;
  fail: ((error: Error) => void) | null = null;
  listed: ISession[] = [];

  streamEvents(options: {
    signal?: AbortSignal;
    onText: (text: string) => void;
  }): Promise<void> {
    this.streams++;
    return new Promise<void>((resolve, reject) => {
      this.feed = options.onText;
      this.end = resolve;
      this.fail = reject;
      options.signal?.addEventListener('abort', () => {
        const error = new Error('aborted');
        error.name = 'AbortError';
        reject(error);
      });
    });
  }

  async listSessions(): Promise<ISession[]> {
    return this.listed;
  }
}

function sse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

const flush = () => new Promise(resolve => setTimeout(resolve, 0));

describe('SessionsModel', () => {
  let client: FakeClient;
  let model: SessionsModel;

  beforeEach(() => {
    client = new FakeClient();
    model = new SessionsModel({
      client: client as unknown as ClusterClient,
      lingerMs: 50,
      retryMs: 10
    });
  });

  afterEach(() => model.dispose());

  it('follows a snapshot, then session and container events', async () => {
    let changes = 0;
    model.changed.connect(() => changes++);
    model.start();
    await flush();
    expect(client.streams).toBe(1);

    const s = session();
    client.feed!(sse('snapshot', { type: 'snapshot', sessions: [s] }));
    expect(model.connected).toBe(true);
    expect(model.sessions.map(x => x.id)).toEqual([s.id]);

    client.feed!(
      sse('container', {
        type: 'container',
        session_id: s.id,
        host: 'sub1',
        status: 'RUNNING',
        previous_status: 'STARTING',
        status_reason: '',
        container_id: 'abc',
        agent: 'local'
      })
    );
    const sub1 = model.get(s.id)!.containers.find(c => c.host === 'sub1')!;
    expect(sub1).toMatchObject({ status: 'RUNNING', container_id: 'abc' });

    const running = { ...s, status: 'RUNNING' as const, updated_at: 1001 };
    client.feed!(
      sse('session', {
        type: 'session',
        session_id: s.id,
        status: 'RUNNING',
        previous_status: 'PREPARING',
        session: running
      })
    );
    expect(model.get(s.id)!.status).toBe('RUNNING');
    expect(changes).toBeGreaterThanOrEqual(3);
  });

  it('keeps sessions that ended for a while, then drops them', async () => {
    model.start();
    await flush();
    const s = session({ status: 'TERMINATED', updated_at: 2000 });
    client.feed!(
      sse('session', {
        type: 'session',
        session_id: s.id,
        status: 'TERMINATED',
        previous_status: 'RUNNING',
        session: s
      })
    );
    expect(model.get(s.id)?.status).toBe('TERMINATED');
    // A snapshot without it does not drop it before its time.
    client.feed!(sse('snapshot', { type: 'snapshot', sessions: [] }));
    expect(model.get(s.id)).toBeDefined();
    await new Promise(resolve => setTimeout(resolve, 80));
    expect(model.get(s.id)).toBeUndefined();
  });

  it('drops sessions missing from a new snapshot', async () => {
    model.start();
    await flush();
    client.feed!(sse('snapshot', { type: 'snapshot', sessions: [session()] }));
    client.feed!(sse('snapshot', { type: 'snapshot', sessions: [] }));
    expect(model.sessions).toEqual([]);
  });

  it('ignores an older copy of a session', () => {
    const newer = session({ status: 'RUNNING', updated_at: 5 });
    model.upsert(newer);
    model.upsert(session({ status: 'PREPARING', updated_at: 4 }));
    expect(model.get(newer.id)!.status).toBe('RUNNING');
  });

  it('reopens the stream when it ends or fails', async () => {
    model.start();
    await flush();
    client.feed!(sse('snapshot', { type: 'snapshot', sessions: [] }));
    client.end!();
    await flush();
    expect(model.connected).toBe(false);
    await new Promise(resolve => setTimeout(resolve, 30));
    expect(client.streams).toBe(2);
    client.fail!(new Error('server gone'));
    await flush();
    expect(model.error).toBe('server gone');
    await new Promise(resolve => setTimeout(resolve, 50));
    expect(client.streams).toBe(3);
  });

  it('sorts sessions oldest first and refreshes from GET sessions', async () => {
    client.listed = [
      session({ id: 'b'.repeat(36), created_at: 20 }),
      session({ id: 'a'.repeat(36), created_at: 10 })
    ];
    await model.refresh();
    expect(model.sessions.map(s => s.created_at)).toEqual([10, 20]);
  });

  it('skips malformed events', async () => {
    const warn = jest
      .spyOn(console, 'warn')
      .mockImplementation(() => undefined);
    model.start();
    await flush();
    client.feed!('event: session\ndata: {not json\n\n');
    expect(model.sessions).toEqual([]);
    expect(warn).toHaveBeenCalled();
    warn.mockRestore();
  });
});

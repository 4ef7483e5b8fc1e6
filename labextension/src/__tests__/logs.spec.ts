import { Widget } from '@lumino/widgets';

import { ClusterClient } from '../api';
import { hasEnded, LogPanel, LogView } from '../logs';
import { session } from './fixtures';

/** A client whose log streams the test feeds and ends. */
class FakeClient {
  streams: {
    host: string;
    tail?: number;
    feed: (text: string) => void;
    end: () => void;
    aborted: boolean;
  }[] = [];

  streamLogs(
    _ref: string,
    host: string,
    options: {
      tail?: number;
      signal?: AbortSignal;
      onText: (t: string) => void;
    }
  ): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const stream = {
        host,
        tail: options.tail,
        feed: options.onText,
        end: resolve,
        aborted: false
      };
      this.streams.push(stream);
      options.signal?.addEventListener('abort', () => {
        stream.aborted = true;
        const error = new Error('aborted');
        error.name = 'AbortError';
        reject(error);
      });
    });
  }

  logsCalls: { host: string; tail?: number }[] = [];
  whole = 'whole log\n';

  async logs(_ref: string, host: string, tail?: number): Promise<string> {
    this.logsCalls.push({ host, tail });
    return this.whole;
  }
}

const flush = () => new Promise(resolve => setTimeout(resolve, 0));

describe('LogPanel', () => {
  let client: FakeClient;
  let panel: LogPanel;

  beforeEach(() => {
    client = new FakeClient();
    panel = new LogPanel(client as unknown as ClusterClient, session(), {
      tail: 100,
      maxLines: 1000
    });
    Widget.attach(panel, document.body);
  });

  afterEach(() => panel.dispose());

  it('has a tab per container and streams only the one on screen', async () => {
    const tabs = [...panel.node.querySelectorAll('.lm-TabBar-tab')].map(
      t => t.textContent
    );
    expect(tabs).toEqual(['main1', 'sub1', 'sub2']);
    expect(client.streams.map(s => s.host)).toEqual(['main1']);
    expect(client.streams[0].tail).toBe(100);

    panel.select('sub1');
    await flush();
    expect(client.streams[0].aborted).toBe(true);
    expect(client.streams.map(s => s.host)).toEqual(['main1', 'sub1']);
  });

  it('shows streamed lines, split across chunks', async () => {
    const view = panel.select('main1');
    client.streams[0].feed('jupyter-cluster: rea');
    client.streams[0].feed('dy\nServer listening\n');
    expect(view.text.lines).toEqual([
      'jupyter-cluster: ready',
      'Server listening'
    ]);
    client.streams[0].end();
    await flush();
    expect(
      view.node.querySelector('.jp-ClusterLogs-status')!.textContent
    ).toMatch(/ended/);
    expect(view.following).toBe(false);
  });

  it('stops streaming when follow is turned off, reloads when turned on', async () => {
    const view = panel.view('main1') as LogView;
    view.following = false;
    await flush();
    expect(client.streams[0].aborted).toBe(true);
    view.following = true;
    expect(client.streams.length).toBe(2);
    expect(client.streams[1].aborted).toBe(false);
  });

  it('searches the lines of a view', () => {
    const view = panel.select('main1');
    client.streams[0].feed('a\nneedle one\nb\nneedle two\n');
    const search = view.node.querySelector(
      '.jp-ClusterLogs-search'
    ) as HTMLInputElement;
    search.value = 'needle';
    search.dispatchEvent(new Event('input'));
    expect(view.node.querySelector('.jp-ClusterLogs-count')!.textContent).toBe(
      '1 of 2'
    );
    search.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter' }));
    expect(view.node.querySelector('.jp-ClusterLogs-count')!.textContent).toBe(
      '2 of 2'
    );
    expect(view.node.querySelectorAll('mark').length).toBe(2);
  });

  it('downloads the whole log', async () => {
    const view = panel.select('main1');
    (URL as any).createObjectURL = jest.fn(() => 'blob:x');
    (URL as any).revokeObjectURL = jest.fn();
    const clicked: string[] = [];
    const click = jest
      .spyOn(HTMLAnchorElement.prototype, 'click')
      .mockImplementation(function (this: HTMLAnchorElement) {
        clicked.push(this.download);
      });
    await view.download();
    expect(clicked).toEqual(['e104916a-main1.log']);
    click.mockRestore();
  });

  it('saves the whole log from the server as a blob named after the session and host', async () => {
    const view = panel.select('sub1');
    client.streams[1].feed('only the tail\n');
    client.whole = 'line 1\nline 2\njupyter-cluster: ready\n';
    const blobs: Blob[] = [];
    (URL as any).createObjectURL = jest.fn((blob: Blob) => {
      blobs.push(blob);
      return 'blob:log';
    });
    (URL as any).revokeObjectURL = jest.fn();
    const anchors: { href: string; download: string; attached: boolean }[] = [];
    const click = jest
      .spyOn(HTMLAnchorElement.prototype, 'click')
      .mockImplementation(function (this: HTMLAnchorElement) {
        anchors.push({
          href: this.href,
          download: this.download,
          attached: document.body.contains(this)
        });
      });
    const button = view.node.querySelector(
      '.jp-ClusterLogs-download'
    ) as HTMLButtonElement;
    expect(button.textContent).toBe('Download');
    button.click();
    await flush();
    click.mockRestore();
    expect(client.logsCalls).toEqual([{ host: 'sub1', tail: undefined }]);
    expect(blobs.length).toBe(1);
    expect(blobs[0].type).toBe('text/plain');
    expect(await readBlob(blobs[0])).toBe(client.whole);
    expect(anchors).toEqual([
      { href: 'blob:log', download: 'e104916a-sub1.log', attached: true }
    ]);
    expect(document.querySelector('a[download]')).toBeNull(); // removed
  });
});

describe('LogPanel of a session that ended', () => {
  const ended = () => session({ status: 'TERMINATED', ended_at: 1700000000 });

  it('says the log is the one kept at termination', async () => {
    expect(hasEnded(ended())).toBe(true);
    expect(hasEnded(session({ status: 'RUNNING' }))).toBe(false);
    const client = new FakeClient();
    const panel = new LogPanel(client as unknown as ClusterClient, ended(), {
      tail: 100,
      maxLines: 1000
    });
    Widget.attach(panel, document.body);
    const view = panel.select('sub1');
    await flush();
    expect(view.kept).toBe(true);
    const note = view.node.querySelector('.jp-ClusterLogs-kept') as HTMLElement;
    expect(note.hidden).toBe(false);
    expect(note.textContent).toMatch(
      /Session e104916a ended \(TERMINATED, .*\): this is the log of sub1 kept at termination/
    );
    // The server serves the kept log on the same route; its stream ends at once.
    const stream = client.streams.find(s => s.host === 'sub1')!;
    stream.feed('jupyter-cluster: ready\n');
    stream.end();
    await flush();
    expect(view.text.lines).toEqual(['jupyter-cluster: ready']);
    expect(view.node.querySelector('.jp-ClusterLogs-status')!.textContent).toBe(
      'kept at termination'
    );
    panel.dispose();
  });

  it('adds the note to a panel opened while the session ran', async () => {
    const client = new FakeClient();
    const panel = new LogPanel(client as unknown as ClusterClient, session(), {
      tail: 100,
      maxLines: 1000
    });
    Widget.attach(panel, document.body);
    const main1 = panel.select('main1');
    expect(main1.kept).toBe(false);
    client.streams[0].feed('while running\n');
    client.streams[0].end(); // the container went away
    await flush();
    expect(main1.following).toBe(false);
    panel.showKept(ended());
    // The view on screen loads the kept log.
    expect(client.streams.length).toBe(2);
    expect(client.streams[1].host).toBe('main1');
    expect(main1.following).toBe(true);
    expect(panel.view('main1').kept).toBe(true);
    expect(panel.view('sub1').kept).toBe(true);
    panel.dispose();
  });
});

function readBlob(blob: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result as string);
    reader.onerror = () => reject(reader.error);
    reader.readAsText(blob);
  });
}

import { Widget } from '@lumino/widgets';

import { ClusterClient } from '../api';
import { LogPanel, LogView } from '../logs';
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

  async logs(): Promise<string> {
    return 'whole log\n';
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
});

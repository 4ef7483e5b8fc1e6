import { CommandRegistry } from '@lumino/commands';
import { Widget } from '@lumino/widgets';

import { ClusterClient, ISession } from '../api';
import { CommandIDs } from '../commands';
import { describeProgress } from '../progress';
import { describeResources } from '../sessionitem';
import { SessionsModel } from '../sessions';
import { ClusterSidebar } from '../sidebar';
import { FakeStatsClient, session, usage } from './fixtures';
import { act, render } from './render';

describe('ClusterSidebar', () => {
  let model: SessionsModel;
  let commands: CommandRegistry;
  let calls: { id: string; args: any }[];
  let sidebar: ClusterSidebar;
  let client: FakeStatsClient & {
    agents: () => Promise<never[]>;
    listSessions: jest.Mock;
    listEnded: jest.Mock;
  };

  beforeEach(async () => {
    client = Object.assign(new FakeStatsClient(), {
      agents: () => Promise.resolve([]),
      listSessions: jest.fn(async (): Promise<ISession[]> => []),
      listEnded: jest.fn(async (): Promise<ISession[]> => [])
    });
    model = new SessionsModel({ client: client as unknown as ClusterClient });
    commands = new CommandRegistry();
    calls = [];
    for (const id of Object.values(CommandIDs)) {
      commands.addCommand(id, {
        execute: args => {
          calls.push({ id, args });
        }
      });
    }
    sidebar = new ClusterSidebar(model, commands);
    Widget.attach(sidebar, document.body);
    await render(sidebar);
  });

  afterEach(() => {
    sidebar.dispose();
    model.dispose();
  });

  it('invites to launch when there is no session', async () => {
    expect(sidebar.node.textContent).toMatch(/No cluster sessions/);
    const button = sidebar.node.querySelector(
      '.jp-ClusterSidebar-empty button'
    ) as HTMLButtonElement;
    await act(async () => button.click());
    expect(calls).toEqual([{ id: CommandIDs.launch, args: {} }]);
  });

  it('shows a batch job on a line of its own', async () => {
    const started = Date.now() / 1000 - 30;
    model.upsert(
      session({
        status: 'RUNNING',
        command: 'python train.py',
        job: {
          state: 'running',
          exit_code: null,
          duration: null,
          tries: [
            { number: 1, started_at: started, ended_at: null, exit_code: null }
          ]
        }
      })
    );
    await render(sidebar);
    const line = sidebar.node.querySelector('.jp-ClusterSession-job')!;
    expect(line.textContent).toMatch(/^job running (29|30|31)s$/);
    expect(line.getAttribute('title')).toBe('python train.py');
  });

  it('lists sessions with status, reason, mode, size, age and containers', async () => {
    const pending = session({
      status: 'PENDING',
      status_reason: 'no agent of default has room for 3 containers',
      created_at: Date.now() / 1000 - 125
    });
    model.upsert(pending);
    await render(sidebar);
    const item = sidebar.node.querySelector('.jp-ClusterSession')!;
    expect(item.getAttribute('data-status')).toBe('PENDING');
    expect(item.querySelector('.jp-ClusterSession-name')!.textContent).toBe(
      'e104916a'
    );
    expect(item.querySelector('.jp-ClusterStatus')!.textContent).toBe(
      'PENDING'
    );
    expect(
      item.querySelector('.jp-ClusterSession-reason')!.textContent
    ).toMatch(/no agent of default has room/);
    const meta = item.querySelector('.jp-ClusterSession-meta')!.textContent;
    expect(meta).toMatch(/single-node/);
    expect(meta).toMatch(/3 containers/);
    expect(meta).toMatch(/2m old/);
    expect(item.querySelector('.jp-ClusterSession-idle')).toBeNull(); // no timeout
    const hosts = [...item.querySelectorAll('.jp-ClusterContainer-host')].map(
      n => n.textContent
    );
    expect(hosts).toEqual(['main1', 'sub1', 'sub2']);
    expect(
      item.querySelector('.jp-ClusterContainer-detail')!.textContent
    ).toMatch(/local.*0.5 CPU · 512m mem · 64m shm/);
    // Nothing runs yet: no terminal, no notebook; cancel is offered.
    expect(
      (item.querySelector('.jp-ClusterContainer-terminal') as HTMLButtonElement)
        .disabled
    ).toBe(true);
    expect(
      (item.querySelector('.jp-ClusterSession-notebook') as HTMLButtonElement)
        .disabled
    ).toBe(true);
    expect(
      (item.querySelector('.jp-ClusterSession-terminals') as HTMLButtonElement)
        .disabled
    ).toBe(true);
    expect(
      item.querySelector('.jp-ClusterSession-terminate')!.textContent
    ).toBe('Cancel');
  });

  it('shows the time left before an idle session is terminated', async () => {
    model.upsert(
      session({ status: 'RUNNING', idle_deadline: Date.now() / 1000 + 245 })
    );
    await render(sidebar);
    const idle = sidebar.node.querySelector('.jp-ClusterSession-idle')!;
    expect(idle.textContent).toMatch(/idle, ends in 4m/);
    expect(idle.getAttribute('title')).toMatch(
      /unless its kernel runs something/
    );
  });
  it('runs the actions of a running session and its containers', async () => {
    const s = session({ status: 'RUNNING', kernel_state: 'running' });
    s.containers = s.containers.map(c => ({
      ...c,
      status: 'RUNNING',
      container_id: `c-${c.host}`
    }));
    model.upsert(s);
    await render(sidebar);
    const click = async (selector: string) => {
      const button = sidebar.node.querySelector(selector) as HTMLButtonElement;
      expect(button.disabled).toBe(false);
      await act(async () => button.click());
    };
    await click('.jp-ClusterSession-notebook');
    await click('.jp-ClusterSession-terminals');
    await click('.jp-ClusterSession-terminate');
    await click('[data-host="sub1"] .jp-ClusterContainer-logs');
    await click('[data-host="sub2"] .jp-ClusterContainer-terminal');
    expect(calls).toEqual([
      { id: CommandIDs.openNotebook, args: { sessionId: s.id } },
      { id: CommandIDs.openAllTerminals, args: { sessionId: s.id } },
      { id: CommandIDs.terminate, args: { sessionId: s.id } },
      { id: CommandIDs.openLogs, args: { sessionId: s.id, host: 'sub1' } },
      { id: CommandIDs.openTerminal, args: { sessionId: s.id, host: 'sub2' } }
    ]);
  });

  it('keeps the log buttons of an ended session that lingers', async () => {
    const s = running();
    s.containers[2] = { ...s.containers[2], container_id: null };
    model.upsert({ ...s, status: 'TERMINATED', ended_at: 2000 });
    await render(sidebar);
    const logs = (host: string) =>
      sidebar.node.querySelector(
        `[data-host="${host}"] .jp-ClusterContainer-logs`
      ) as HTMLButtonElement;
    expect(logs('main1').disabled).toBe(false);
    expect(logs('sub1').disabled).toBe(false);
    expect(logs('sub2').disabled).toBe(true); // it never ran
    expect(
      (
        sidebar.node.querySelector(
          '[data-host="sub1"] .jp-ClusterContainer-terminal'
        ) as HTMLButtonElement
      ).disabled
    ).toBe(true);
    await act(async () => logs('sub1').click());
    expect(calls).toEqual([
      { id: CommandIDs.openLogs, args: { sessionId: s.id, host: 'sub1' } }
    ]);
  });

  it('lists recent ended sessions with their logs once the section is opened', async () => {
    const ended = (id: string, at: number, status: any = 'TERMINATED') => {
      const s = running({ id, status, ended_at: at });
      s.containers = s.containers.map(c => ({ ...c, status: 'TERMINATED' }));
      return s;
    };
    const cancelled = session({
      id: 'cccccccc-0000',
      status: 'CANCELLED',
      ended_at: 3000
    });
    const all = [
      running({ id: 'rrrrrrrr-0000' }), // still running: not listed
      ended('aaaaaaaa-0000', 1000),
      ended('bbbbbbbb-0000', 2000, 'ERROR'),
      cancelled
    ];
    for (let i = 0; i < 12; i++) {
      all.push(ended(`old${i}`, 10 + i));
    }
    client.listEnded.mockResolvedValue(all);
    await render(sidebar);
    const section = sidebar.node.querySelector('.jp-ClusterRecent')!;
    const toggle = section.querySelector(
      '.jp-ClusterRecent-toggle'
    ) as HTMLButtonElement;
    expect(toggle.getAttribute('aria-expanded')).toBe('false');
    expect(client.listEnded).not.toHaveBeenCalled(); // loaded when opened

    await act(async () => toggle.click());
    expect(client.listEnded).toHaveBeenCalledWith(50); // one page, not the history
    expect(toggle.getAttribute('aria-expanded')).toBe('true');
    const items = [...section.querySelectorAll('.jp-ClusterRecent-session')];
    expect(items.map(i => i.getAttribute('data-session-id'))).toEqual([
      'cccccccc-0000',
      'bbbbbbbb-0000',
      'aaaaaaaa-0000',
      'old11',
      'old10',
      'old9',
      'old8',
      'old7',
      'old6',
      'old5'
    ]);
    // A cancelled session never ran: no logs.
    const logsOf = (i: number) =>
      [...items[i].querySelectorAll('.jp-ClusterRecent-log')].map(b => [
        b.textContent,
        (b as HTMLButtonElement).disabled
      ]);
    expect(logsOf(0)).toEqual([
      ['main1', true],
      ['sub1', true],
      ['sub2', true]
    ]);
    expect(logsOf(2)).toEqual([
      ['main1', false],
      ['sub1', false],
      ['sub2', false]
    ]);
    expect(items[2].textContent).toMatch(/ended .* ago/);
    const sub1 = items[2].querySelectorAll(
      '.jp-ClusterRecent-log'
    )[1] as HTMLButtonElement;
    await act(async () => sub1.click());
    expect(calls).toEqual([
      {
        id: CommandIDs.openLogs,
        args: { sessionId: 'aaaaaaaa-0000', host: 'sub1' }
      }
    ]);

    // Folding and opening again reads the list again.
    await act(async () => toggle.click());
    expect(section.querySelector('.jp-ClusterRecent-session')).toBeNull();
    await act(async () => toggle.click());
    expect(client.listEnded).toHaveBeenCalledTimes(2);
  });

  it('says when the recent sessions cannot be read', async () => {
    client.listEnded.mockRejectedValue(new Error('server gone'));
    const toggle = sidebar.node.querySelector(
      '.jp-ClusterRecent-toggle'
    ) as HTMLButtonElement;
    await act(async () => toggle.click());
    expect(
      sidebar.node.querySelector('.jp-ClusterRecent')!.textContent
    ).toMatch(/Could not read the sessions: server gone/);
  });

  it('collapses and expands a session', async () => {
    model.upsert(session());
    await render(sidebar);
    const header = sidebar.node.querySelector(
      '.jp-ClusterSession-header'
    ) as HTMLElement;
    expect(sidebar.node.querySelectorAll('.jp-ClusterContainer').length).toBe(
      3
    );
    await act(async () => header.click());
    expect(sidebar.node.querySelectorAll('.jp-ClusterContainer').length).toBe(
      0
    );
    await act(async () => header.click());
    expect(sidebar.node.querySelectorAll('.jp-ClusterContainer').length).toBe(
      3
    );
  });

  it('updates live when the model changes', async () => {
    const s = session();
    model.upsert(s);
    await render(sidebar);
    await act(async () => {
      model.apply({
        type: 'container',
        session_id: s.id,
        host: 'main1',
        status: 'RUNNING',
        previous_status: 'STARTING',
        container_id: 'abc'
      });
    });
    expect(
      sidebar.node
        .querySelector('[data-host="main1"]')!
        .getAttribute('data-status')
    ).toBe('RUNNING');
  });
});

/** A session with every container running (container ids c-<host>). */
function running(overrides: Partial<ISession> = {}): ISession {
  const s = session({
    status: 'RUNNING',
    kernel_state: 'running',
    ...overrides
  });
  s.containers = s.containers.map(c => ({
    ...c,
    status: 'RUNNING',
    container_id: `c-${c.host}`
  }));
  return s;
}

function sse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

describe('ClusterSidebar usage graphs', () => {
  let model: SessionsModel;
  let sidebar: ClusterSidebar;
  let client: FakeStatsClient & { agents: () => Promise<never[]> };

  beforeEach(async () => {
    client = Object.assign(new FakeStatsClient(), {
      agents: () => Promise.resolve([])
    });
    model = new SessionsModel({
      client: client as unknown as ClusterClient,
      lingerMs: 60000
    });
    sidebar = new ClusterSidebar(model, new CommandRegistry());
    Widget.attach(sidebar, document.body);
    await render(sidebar);
  });

  afterEach(async () => {
    await act(async () => sidebar.dispose());
    model.dispose();
  });

  const header = () =>
    sidebar.node.querySelector('.jp-ClusterSession-header') as HTMLElement;

  it('opens one stats stream for an expanded running session, closes it on collapse', async () => {
    const s = running();
    model.upsert(s);
    await render(sidebar);
    await render(sidebar); // re-renders open no more streams
    expect(client.streams.map(x => x.ref)).toEqual([s.id]);

    await act(async () => {
      client.streams[0].feed(
        sse('stats', {
          session_id: s.id,
          time: 100,
          hosts: { main1: usage(), sub1: usage({ cpu_percent: 3 }), sub2: null }
        }) +
          sse('stats', {
            session_id: s.id,
            time: 102,
            hosts: { main1: usage(), sub1: usage(), sub2: null }
          })
      );
    });
    const main1 = sidebar.node.querySelector(
      '.jp-ClusterContainer[data-host="main1"] .jp-ClusterStats'
    )!;
    expect(main1.textContent).toContain('CPU 47%');
    expect(main1.textContent).toContain('MEM 120m / 512m');
    expect(
      main1.querySelector('.jp-ClusterStats-cpu')!.getAttribute('data-points')
    ).toBe('2');
    expect(
      sidebar.node.querySelector(
        '.jp-ClusterContainer[data-host="sub2"] .jp-ClusterStats'
      )!.textContent
    ).toBe('not running');

    await act(async () => header().click()); // collapse
    expect(client.streams[0].aborted).toBe(true);
    expect(client.open).toEqual([]);
    expect(sidebar.node.querySelector('.jp-ClusterStats')).toBeNull();

    await act(async () => header().click()); // expand: a new stream
    expect(client.streams.length).toBe(2);
    expect(client.open.length).toBe(1);
  });

  it('opens no stream for a session that does not run, closes it when it ends', async () => {
    model.upsert(session({ status: 'PREPARING' }));
    await render(sidebar);
    expect(client.streams).toEqual([]);

    const s = running({ updated_at: 2000 });
    await act(async () => model.upsert(s));
    expect(client.open.length).toBe(1);

    await act(async () =>
      model.upsert({ ...s, status: 'TERMINATED', updated_at: 3000 })
    );
    expect(client.streams.length).toBe(1);
    expect(client.open).toEqual([]);
  });

  it('reads only while the sidebar is on screen', async () => {
    model.upsert(running());
    await render(sidebar);
    expect(client.open.length).toBe(1);
    sidebar.hide();
    await render(sidebar);
    expect(client.open).toEqual([]);
    sidebar.show();
    await render(sidebar);
    expect(client.open.length).toBe(1);
    expect(client.streams.length).toBe(2);
  });

  it('closes the stream when the sidebar is disposed', async () => {
    model.upsert(running());
    await render(sidebar);
    expect(client.open.length).toBe(1);
    await act(async () => sidebar.dispose());
    expect(client.open).toEqual([]);
  });
});

describe('helpers', () => {
  it('describe resources and status', () => {
    const s = session({ status: 'PENDING', status_reason: 'waiting' });
    expect(describeProgress(s, false).message).toBe(
      'Cluster session e104916a is PENDING: waiting'
    );
    expect(
      describeResources(
        { ...s, resources: { cpu: 2, mem: 2 * 1024 ** 3, shm: 0, gpu: 1 } },
        { ...s.containers[0], gpu_ids: ['0'] }
      )
    ).toBe('2 CPU · 2g mem · 1 GPU (0)');
  });
});

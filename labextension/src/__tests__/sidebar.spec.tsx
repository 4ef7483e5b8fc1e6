import { CommandRegistry } from '@lumino/commands';
import { Widget } from '@lumino/widgets';

import { ClusterClient } from '../api';
import { CommandIDs } from '../commands';
import { describeProgress } from '../progress';
import { describeResources } from '../sessionitem';
import { SessionsModel } from '../sessions';
import { ClusterSidebar } from '../sidebar';
import { session } from './fixtures';
import { act, render } from './render';

describe('ClusterSidebar', () => {
  let model: SessionsModel;
  let commands: CommandRegistry;
  let calls: { id: string; args: any }[];
  let sidebar: ClusterSidebar;

  beforeEach(async () => {
    const client = { agents: () => Promise.resolve([]) };
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
    await click('.jp-ClusterSession-terminate');
    await click('[data-host="sub1"] .jp-ClusterContainer-logs');
    await click('[data-host="sub2"] .jp-ClusterContainer-terminal');
    expect(calls).toEqual([
      { id: CommandIDs.openNotebook, args: { sessionId: s.id } },
      { id: CommandIDs.terminate, args: { sessionId: s.id } },
      { id: CommandIDs.openLogs, args: { sessionId: s.id, host: 'sub1' } },
      { id: CommandIDs.openTerminal, args: { sessionId: s.id, host: 'sub2' } }
    ]);
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

import { InputDialog } from '@jupyterlab/apputils';
import { CommandRegistry } from '@lumino/commands';
import { Widget } from '@lumino/widgets';

import { ADMIN_COMMAND, addAdminCommand } from '../admincommand';
import {
  AdminModel,
  endSession,
  readPolicies,
  whoAmI,
  IUsageReport
} from '../adminapi';
import { ClusterAdminPanel, ownersOf } from '../adminpanel';
import { queueOf } from '../adminsections';
import { ClusterAPIError, ClusterClient } from '../api';
import { SessionsModel } from '../sessions';
import { agent, session } from './fixtures';
import { act, render } from './render';

const USAGE: IUsageReport = {
  since: null,
  until: null,
  now: 5000,
  users: [
    {
      user: 'alice',
      sessions: 2,
      running_hours: 1,
      cpu_hours: 3,
      mem_gib_hours: 1.5,
      gpu_hours: 0
    },
    {
      user: 'bob',
      sessions: 1,
      running_hours: 0.5,
      cpu_hours: 1.5,
      mem_gib_hours: 0.25,
      gpu_hours: 0
    }
  ],
  sessions: []
};

/** A client whose routes answer from `routes` (a path, e.g. 'limits/users'), else 404. */
function fakeClient(routes: Record<string, unknown>): any {
  const calls: string[] = [];
  const client = {
    calls,
    request: jest.fn(async (parts: string[], init: any = {}, query = '') => {
      const path = parts.join('/');
      calls.push(`${init.method ?? 'GET'} ${path}${query}`);
      if (init.method === 'DELETE') {
        return undefined;
      }
      if (!(path in routes)) {
        throw new ClusterAPIError('no such route', 404);
      }
      const answer = routes[path];
      if (answer instanceof Error) {
        throw answer;
      }
      return answer;
    }),
    agents: jest.fn(async () => [agent('a1', 4, 8), agent('g1', 8, 32, 'gpu')])
  };
  return client;
}

describe('the admin API', () => {
  it('asks who the caller is; an older server cannot say', async () => {
    const me = { name: 'carol', admin: true, groups: [] };
    expect(await whoAmI(fakeClient({ me }))).toEqual(me);
    expect(await whoAmI(fakeClient({}))).toBeNull();
    const failing = fakeClient({ me: new ClusterAPIError('down', 502) });
    await expect(whoAmI(failing)).rejects.toThrow('down');
  });

  it('ends a session with a reason in the query', async () => {
    const client = fakeClient({});
    await endSession(client, 's1', '  maintenance at 14:00 ');
    await endSession(client, 's2', '');
    expect(client.calls).toEqual([
      'DELETE sessions/s1?reason=maintenance%20at%2014%3A00',
      'DELETE sessions/s2'
    ]);
  });

  it('reads policies, or says the server has none', async () => {
    expect(await readPolicies(fakeClient({}), ['bob'])).toEqual({
      missing: true,
      limits: null,
      users: {}
    });
    const client = fakeClient({
      limits: { user: 'carol', limits: { sessions: 8 } },
      'limits/users/bob': { effective: { sessions: 2 } }
    });
    expect(await readPolicies(client, ['alice', 'bob'])).toEqual({
      missing: false,
      limits: { user: 'carol', limits: { sessions: 8 } },
      users: { bob: { effective: { sessions: 2 } } }
    });
    expect(client.calls).toEqual([
      'GET limits',
      'GET limits/users/alice',
      'GET limits/users/bob'
    ]);
  });

  it('keeps what each part read, and why a part failed', async () => {
    const client = fakeClient({
      usage: new ClusterAPIError('only admins see other users’ usage', 403)
    });
    const model = new AdminModel(client as any);
    let changes = 0;
    model.changed.connect(() => changes++);
    await model.refresh();
    expect(changes).toBe(1);
    expect(model.agents.map(a => a.id)).toEqual(['a1', 'g1']);
    expect(model.usage).toBeNull();
    expect(model.errors).toEqual({
      usage: 'only admins see other users’ usage'
    });
    expect(model.policies?.missing).toBe(true);
  });
});

describe('the admin command', () => {
  const setup = (me: unknown) => {
    const commands = new CommandRegistry();
    const shell = { add: jest.fn(), activateById: jest.fn() };
    const palette = { addItem: jest.fn() };
    const client = fakeClient({ me, usage: USAGE });
    const model = new SessionsModel({
      client: client as unknown as ClusterClient
    });
    const admin = addAdminCommand({ commands, shell } as any, model, palette);
    return { commands, shell, palette, admin, model };
  };

  it('is hidden and does nothing for a non-admin', async () => {
    const t = setup({ name: 'alice', admin: false, groups: [] });
    expect(t.commands.isVisible(ADMIN_COMMAND)).toBe(false);
    expect(await t.admin.check()).toBe(false);
    expect(t.commands.isVisible(ADMIN_COMMAND)).toBe(false);
    expect(t.commands.isEnabled(ADMIN_COMMAND)).toBe(false);
    expect(t.palette.addItem).not.toHaveBeenCalled();
    expect(await t.admin.open()).toBeNull();
    expect(t.shell.add).not.toHaveBeenCalled();
    t.model.dispose();
  });

  it('is in the palette for an admin and opens the panel once', async () => {
    const t = setup({ name: 'carol', admin: true, groups: [] });
    expect(await t.admin.check()).toBe(true);
    await t.admin.check(); // asked again: listed once
    expect(t.palette.addItem).toHaveBeenCalledTimes(1);
    expect(t.palette.addItem.mock.calls[0][0].command).toBe(ADMIN_COMMAND);
    expect(t.commands.isVisible(ADMIN_COMMAND)).toBe(true);
    expect(t.commands.label(ADMIN_COMMAND)).toBe('Cluster Admin');
    const panel = await t.commands.execute(ADMIN_COMMAND);
    expect(panel).toBeInstanceOf(ClusterAdminPanel);
    expect(t.shell.add).toHaveBeenCalledWith(panel, 'main');
    expect(t.shell.activateById).toHaveBeenCalledWith('jp-cluster-admin');
    panel.dispose();
    t.model.dispose();
  });
});

describe('the admin panel', () => {
  let model: SessionsModel;
  let client: any;
  let panel: ClusterAdminPanel;

  beforeEach(async () => {
    client = fakeClient({ usage: USAGE });
    model = new SessionsModel({ client: client as unknown as ClusterClient });
    const sessions = [
      session({ id: 'r1', name: 'run-a', owner: 'alice', status: 'RUNNING' }),
      session({
        id: 'p1',
        name: 'wait-b',
        owner: 'bob',
        status: 'PENDING',
        status_reason: 'waiting for 1.5 CPU in default',
        created_at: 1001
      }),
      session({
        id: 'p2',
        name: 'wait-gpu',
        owner: 'alice',
        status: 'PENDING',
        resource_group: 'gpu',
        created_at: 1002
      }),
      session({
        id: 'p3',
        name: 'wait-a',
        owner: 'alice',
        status: 'PENDING',
        created_at: 1003
      }),
      session({ id: 'e1', owner: 'dave', status: 'TERMINATED' })
    ];
    for (const s of sessions) {
      model.upsert(s);
    }
    panel = new ClusterAdminPanel(model, new AdminModel(client as any));
    await act(async () => {
      Widget.attach(panel, document.body);
      await panel.admin.refresh();
    });
    await render(panel);
  });

  afterEach(async () => {
    await act(async () => panel.dispose());
    model.dispose();
  });

  const rows = (selector: string) => [
    ...panel.node.querySelectorAll<HTMLElement>(selector)
  ];

  it('lists every active session with its owner', () => {
    const shown = rows('.jp-ClusterAdmin-sessions tbody tr');
    expect(shown.map(r => [r.dataset.sessionId, r.dataset.owner])).toEqual([
      ['r1', 'alice'],
      ['p1', 'bob'],
      ['p2', 'alice'],
      ['p3', 'alice']
    ]);
    expect(ownersOf(model.sessions)).toEqual(['alice', 'bob', 'dave']);
    const options = rows('.jp-ClusterAdmin-user option').map(
      o => o.textContent
    );
    expect(options).toEqual(['All users', 'alice', 'bob']);
  });

  it('shows the queue per group in order, with the reasons', () => {
    const queue = queueOf(model.sessions);
    expect([...queue.keys()]).toEqual(['default', 'gpu']);
    expect(queue.get('default')?.map(s => s.id)).toEqual(['p1', 'p3']);
    const listed = rows('.jp-ClusterAdmin-queue [data-group="default"] li');
    expect(listed.map(li => li.dataset.sessionId)).toEqual(['p1', 'p3']);
    expect(listed[0].textContent).toContain('waiting for 1.5 CPU in default');
  });

  it('filters by user', async () => {
    panel.user = 'bob';
    await render(panel);
    const shown = rows('.jp-ClusterAdmin-sessions tbody tr');
    expect(shown.map(r => r.dataset.sessionId)).toEqual(['p1']);
    const usage = rows('.jp-ClusterAdmin-usage tbody tr');
    expect(usage.map(r => r.dataset.user)).toEqual(['bob']);
  });

  it('shows agents, usage with bars and the missing policies', () => {
    expect(rows('.jp-ClusterAgent').map(a => a.dataset.agent)).toEqual([
      'a1',
      'g1'
    ]);
    const bars = rows('.jp-ClusterAdmin-bar').map(b => b.style.width);
    expect(bars).toEqual(['100%', '50%']);
    expect(rows('[data-missing="policies"]')).toHaveLength(1);
  });

  it("shows each known user's policy entry, filtered by user", async () => {
    client = fakeClient({
      usage: USAGE,
      limits: { user: 'carol' },
      'limits/users/alice': { effective: { sessions: 4 } },
      'limits/users/bob': {
        effective: { sessions: 2, cpu: 0, images: [] },
        changed: { sessions: 2 }
      }
    });
    const admin = new AdminModel(client);
    await admin.refresh(ownersOf(model.sessions));
    expect(Object.keys(admin.policies!.users)).toEqual(['alice', 'bob']);
    expect(client.calls).toContain('GET limits/users/dave'); // an ended session's owner
    panel.dispose();
    panel = new ClusterAdminPanel(model, admin);
    await act(async () => Widget.attach(panel, document.body));
    await render(panel);
    const entries = () =>
      rows('.jp-ClusterAdmin-policies details[data-user]').map(
        d => d.dataset.user
      );
    expect(entries()).toEqual(['alice', 'bob']);
    expect(rows('[data-missing="policies"]')).toHaveLength(0);
    panel.user = 'bob';
    await render(panel);
    expect(entries()).toEqual(['bob']);
    const cells = rows('details[data-user="bob"] tr[data-key]').map(r => [
      r.dataset.key,
      r.querySelector('td')?.textContent,
      r.dataset.changed ?? ''
    ]);
    expect(cells).toEqual([
      ['sessions', '2 (changed at run time)', 'true'],
      ['cpu', 'no limit', ''],
      ['images', 'any', '']
    ]);
  });

  it('ends a session with the reason the admin gives, or not at all', async () => {
    const ask = jest.spyOn(InputDialog, 'getText');
    ask.mockResolvedValueOnce({
      button: { accept: false },
      value: null
    } as any);
    ask.mockResolvedValueOnce({
      button: { accept: true },
      value: 'too big for the queue'
    } as any);
    const end = () =>
      panel.node
        .querySelector<HTMLButtonElement>(
          'tr[data-session-id="p1"] .jp-ClusterAdmin-end'
        )!
        .click();
    end(); // cancelled
    await act(async () => undefined);
    end();
    await act(async () => undefined);
    expect(ask.mock.calls[0][0].title).toBe('End wait-b of bob?');
    const deletes = client.calls.filter((c: string) => c.startsWith('DELETE'));
    expect(deletes).toEqual([
      'DELETE sessions/p1?reason=too%20big%20for%20the%20queue'
    ]);
    ask.mockRestore();
  });
});

import { showErrorMessage, WidgetTracker } from '@jupyterlab/apputils';
import { CommandRegistry } from '@lumino/commands';
import { Title } from '@lumino/widgets';

import { ClusterAPIError, ClusterClient, ISession } from '../api';
import { IContext } from '../context';
import { LogPanel } from '../logs';
import { SessionsModel } from '../sessions';
import { readSettings } from '../settings';
import {
  compareHosts,
  describeOutcome,
  openAllTerminals,
  openTerminal,
  planTerminals,
  terminalLabel
} from '../terminals';
import { session } from './fixtures';

jest.mock('@jupyterlab/apputils', () => ({
  ...jest.requireActual('@jupyterlab/apputils'),
  showErrorMessage: jest.fn(async () => undefined)
}));

const errorMessage = showErrorMessage as jest.Mock;

/** A session of `hosts` (all running unless `status` says otherwise). */
function cluster(
  hosts: string[],
  status: Record<string, string> = {},
  overrides: Partial<ISession> = {}
): ISession {
  const s = session({ status: 'RUNNING', size: hosts.length, ...overrides });
  s.containers = hosts.map((host, i) => ({
    ...s.containers[0],
    host,
    role: host === 'main1' ? 'main' : 'sub',
    local_rank: i,
    status: (status[host] ?? 'RUNNING') as any,
    container_id: status[host] ? null : `c-${host}`
  }));
  return s;
}

/**
 * A context whose `terminal:open` makes a tab (a real Lumino title) for each
 * name, in order, unless `failTab` names it; the client answers `getSession`
 * with `fresh` and `openTerminal` with name `t-<host>` (or fails for hosts in
 * `failHost`); for hosts in `endedHost` (their shell ended at once),
 * `terminal:open` fails as JupyterLab's does when the server refuses a new
 * terminal under a cluster terminal's name (409).
 */
function setup(
  fresh: ISession,
  options: {
    failHost?: string[];
    failTab?: string[];
    endedHost?: string[];
  } = {}
) {
  const commands = new CommandRegistry();
  const tabs: { name: string; title: Title<any> }[] = [];
  const shutdown = jest.fn(async () => undefined);
  commands.addCommand('terminal:open', {
    execute: args => {
      const name = args.name as string;
      if (options.failTab?.includes(name)) {
        throw new Error('no websocket');
      }
      if (options.endedHost?.some(host => name === `t-${host}`)) {
        throw Object.assign(new Error(`${name} was a terminal into ...`), {
          response: { status: 409 }
        });
      }
      const title = new Title<any>({ owner: {}, label: '...' });
      tabs.push({ name, title });
      return { content: { title } };
    }
  });
  const client = {
    getSession: jest.fn(async () => fresh),
    openTerminal: jest.fn(async (_: string, host: string) => {
      if (options.failHost?.includes(host)) {
        throw new ClusterAPIError(`${host} of session x is EXITED`, 409);
      }
      return { name: `t-${host}` };
    })
  };
  const model = new SessionsModel({
    client: client as unknown as ClusterClient
  });
  const ctx: IContext = {
    app: {
      commands,
      serviceManager: { terminals: { shutdown } }
    } as any,
    model,
    settings: () => readSettings({}),
    logs: new WidgetTracker<LogPanel>({ namespace: 'test-terminals' }),
    showSidebar: jest.fn()
  };
  return { ctx, tabs, client, shutdown, model };
}

describe('the order and titles of terminals', () => {
  it('put main1 first, then the subs by number', () => {
    const hosts = ['sub10', 'sub2', 'main1', 'sub1', 'sub9'];
    expect([...hosts].sort(compareHosts)).toEqual([
      'main1',
      'sub1',
      'sub2',
      'sub9',
      'sub10'
    ]);
  });

  it('name the host and the session', () => {
    expect(terminalLabel('train-7', 'sub1')).toBe('sub1 · train-7');
  });
});

describe('planTerminals', () => {
  it('opens the running containers in host order and skips the others', () => {
    const s = cluster(['sub2', 'main1', 'sub1'], { sub2: 'EXITED' });
    s.containers[0].status_reason = 'exited with code 137 (OOM killed)';
    expect(planTerminals(s)).toEqual({
      hosts: ['main1', 'sub1'],
      skipped: [{ host: 'sub2', reason: 'exited with code 137 (OOM killed)' }]
    });
  });

  it('refuses a session that does not run, saying so', () => {
    const ended = cluster(['main1', 'sub1'], {}, { status: 'TERMINATED' });
    expect(() => planTerminals(ended)).toThrow(
      'Session e104916a is TERMINATED, not running: there is no container to open a terminal in.'
    );
    const dead = cluster(
      ['main1', 'sub1'],
      { main1: 'EXITED', sub1: 'EXITED' },
      { status: 'RUNNING_DEGRADED' }
    );
    expect(() => planTerminals(dead)).toThrow(
      'No container of session e104916a is running.'
    );
  });
});

describe('describeOutcome', () => {
  it('says nothing when every container got a terminal', () => {
    expect(describeOutcome('s', { opened: ['main1'], failed: [] })).toBe(null);
  });

  it('names what opened, what did not and why', () => {
    expect(
      describeOutcome('s', {
        opened: ['main1', 'sub2'],
        failed: [{ host: 'sub1', reason: 'ssh: connection refused' }]
      })
    ).toEqual({
      title: 'Some terminals of s could not be opened',
      message:
        'Opened in main1, sub2; none in sub1.\nsub1: ssh: connection refused'
    });
    expect(
      describeOutcome('s', {
        opened: [],
        failed: [
          { host: 'main1', reason: 'a' },
          { host: 'sub1', reason: 'b' }
        ]
      })
    ).toEqual({
      title: 'Could not open terminals in s',
      message: 'No terminal was opened.\nmain1: a\nsub1: b'
    });
  });
});

describe('openAllTerminals', () => {
  beforeEach(() => jest.clearAllMocks());

  it('opens one tab per container, main1 first, titled host · session', async () => {
    const fresh = cluster(['main1', 'sub1', 'sub2']);
    const { ctx, tabs, client, model } = setup(fresh);
    const outcome = await openAllTerminals(ctx, { ...fresh, containers: [] });
    expect(client.getSession).toHaveBeenCalledWith(fresh.id);
    expect(client.openTerminal.mock.calls.map(c => c[1])).toEqual([
      'main1',
      'sub1',
      'sub2'
    ]);
    expect(tabs.map(t => t.name)).toEqual(['t-main1', 't-sub1', 't-sub2']);
    expect(tabs.map(t => t.title.label)).toEqual([
      'main1 · e104916a',
      'sub1 · e104916a',
      'sub2 · e104916a'
    ]);
    expect(outcome).toEqual({ opened: ['main1', 'sub1', 'sub2'], failed: [] });
    expect(errorMessage).not.toHaveBeenCalled();
    // The terminal renames itself once connected, the shell sets its title:
    // the tab keeps its name.
    tabs[1].title.label = 'Terminal 4';
    tabs[1].title.label = 'work@sub1: ~';
    expect(tabs[1].title.label).toBe('sub1 · e104916a');
    expect(tabs[1].title.caption).toBe(
      'Terminal t-sub1: sub1 of cluster session e104916a'
    );
    model.dispose();
  });

  it('opens the others when one host fails, and says which and why', async () => {
    const fresh = cluster(['main1', 'sub1', 'sub2'], {});
    const { ctx, tabs, model } = setup(fresh, { failHost: ['sub1'] });
    const outcome = await openAllTerminals(ctx, fresh);
    expect(tabs.map(t => t.name)).toEqual(['t-main1', 't-sub2']);
    expect(outcome.failed).toEqual([
      { host: 'sub1', reason: 'sub1 of session x is EXITED' }
    ]);
    expect(errorMessage).toHaveBeenCalledWith(
      'Some terminals of e104916a could not be opened',
      'Opened in main1, sub2; none in sub1.\nsub1: sub1 of session x is EXITED'
    );
    model.dispose();
  });

  it('ends a shell the server started when its tab does not open', async () => {
    const fresh = cluster(['main1', 'sub1']);
    const { ctx, tabs, shutdown, model } = setup(fresh, {
      failTab: ['t-main1']
    });
    const outcome = await openAllTerminals(ctx, fresh);
    expect(tabs.map(t => t.name)).toEqual(['t-sub1']);
    expect(shutdown).toHaveBeenCalledWith('t-main1');
    expect(outcome).toEqual({
      opened: ['sub1'],
      failed: [{ host: 'main1', reason: 'no websocket' }]
    });
    expect(errorMessage).toHaveBeenCalledTimes(1);
    model.dispose();
  });

  it('opens no tab for a shell that ended at once (no host shell takes its name)', async () => {
    const fresh = cluster(['main1', 'sub1']);
    const { ctx, tabs, model } = setup(fresh, { endedHost: ['main1'] });
    const outcome = await openAllTerminals(ctx, fresh);
    // The server refused a plain terminal under the name t-main1: no host shell.
    expect(tabs.map(t => t.name)).toEqual(['t-sub1']);
    expect(outcome).toEqual({
      opened: ['sub1'],
      failed: [
        {
          host: 'main1',
          reason:
            'The shell in main1 ended as soon as it started (see the server log).'
        }
      ]
    });
    expect(errorMessage).toHaveBeenCalledTimes(1);
    model.dispose();
  });

  it('opens nothing in a session that has ended meanwhile', async () => {
    const fresh = cluster(['main1', 'sub1'], {}, { status: 'TERMINATING' });
    const { ctx, tabs, client, model } = setup(fresh);
    await expect(
      openAllTerminals(ctx, { ...fresh, status: 'RUNNING' })
    ).rejects.toThrow('Session e104916a is TERMINATING, not running');
    expect(client.openTerminal).not.toHaveBeenCalled();
    expect(tabs).toEqual([]);
    model.dispose();
  });
});

describe('openTerminal', () => {
  it('opens the server terminal and names it after the container', async () => {
    const fresh = cluster(['main1', 'sub1']);
    const { ctx, tabs, client, model } = setup(fresh);
    await openTerminal(ctx, fresh, 'sub1');
    expect(client.openTerminal).toHaveBeenCalledWith(fresh.id, 'sub1');
    expect(tabs.map(t => [t.name, t.title.label])).toEqual([
      ['t-sub1', 'sub1 · e104916a']
    ]);
    model.dispose();
  });

  it('fails clearly when terminals are off', async () => {
    const { ctx, model } = setup(cluster(['main1']));
    const commands = new CommandRegistry();
    const off = { ...ctx, app: { ...ctx.app, commands } as any };
    await expect(
      openTerminal(off, cluster(['main1']), 'main1')
    ).rejects.toThrow(/Terminals are not available/);
    await expect(openAllTerminals(off, cluster(['main1']))).rejects.toThrow(
      /Terminals are not available/
    );
    model.dispose();
  });
});

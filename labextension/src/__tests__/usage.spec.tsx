import { CommandRegistry } from '@lumino/commands';
import { Widget } from '@lumino/widgets';

import { IUsageReport } from '../adminapi';
import { ClusterAPIError } from '../api';
import { addUsageCommand, USAGE_COMMAND } from '../usagecommand';
import { CHART_SESSIONS, ClusterUsagePanel, cpuTime } from '../usageview';
import { act, render } from './render';

const totals = {
  running_hours: 1,
  cpu_hours: 2,
  mem_gib_hours: 1,
  gpu_hours: 0
};

function sessionRow(id: string, owner: string, at: number, used: number) {
  return {
    ...totals,
    id,
    name: id,
    owner,
    status: 'TERMINATED',
    size: 1,
    resources: { cpu: 2, mem: 1 << 30, gpu: 0 },
    created_at: at,
    ended_at: at + 3600,
    sessions: 1,
    cpu_seconds_used: used
  };
}

const MINE: IUsageReport = {
  since: null,
  until: null,
  now: 9000,
  users: [{ ...totals, user: 'alice', sessions: 2, cpu_seconds_used: 5400 }],
  sessions: [
    sessionRow('s2', 'alice', 2000, 5400),
    sessionRow('s1', 'alice', 1000, 0)
  ]
};

const EVERYONE: IUsageReport = {
  ...MINE,
  users: [
    { ...totals, user: 'alice', sessions: 2, cpu_seconds_used: 5400 },
    { ...totals, user: 'bob', sessions: 1, cpu_hours: 1, cpu_seconds_used: 2.5 }
  ]
};

function client(routes: Record<string, unknown>): any {
  const calls: string[] = [];
  return {
    calls,
    request: jest.fn(async (parts: string[]) => {
      const path = parts.join('/');
      calls.push(path);
      const answer = routes[path];
      if (answer === undefined) {
        throw new ClusterAPIError('no such route', 404);
      }
      if (answer instanceof Error) {
        throw answer;
      }
      return answer;
    })
  };
}

async function shown(
  routes: Record<string, unknown>
): Promise<ClusterUsagePanel> {
  const panel = new ClusterUsagePanel(client(routes));
  await act(async () => {
    Widget.attach(panel, document.body);
    await panel.refresh();
  });
  await render(panel);
  return panel;
}

const texts = (panel: Widget, selector: string) =>
  [...panel.node.querySelectorAll(selector)].map(e => e.textContent);

describe('the Cluster usage tab', () => {
  it("shows a user's own usage: no user column, the CPU used, a bar per session", async () => {
    const panel = await shown({
      usage: MINE,
      me: { name: 'alice', admin: false, groups: [] }
    });
    expect(texts(panel, 'h2')).toEqual(['Your usage (all time)']);
    expect(texts(panel, 'thead th')).not.toContain('User');
    const [row] = [...panel.node.querySelectorAll<HTMLElement>('tbody tr')];
    expect(row.dataset.user).toBe('alice');
    expect(row.querySelector('.jp-ClusterUsage-used')?.textContent).toBe(
      '1.50 h'
    );
    const bars = [...panel.node.querySelectorAll<SVGGElement>('svg g')];
    expect(bars.map(g => g.dataset.sessionId)).toEqual(['s1', 's2']); // oldest first
    const used = bars.map(g =>
      Number(
        g.querySelector('.jp-ClusterUsage-usedBar')?.getAttribute('height')
      )
    );
    expect(used[0]).toBe(0);
    expect(used[1]).toBeGreaterThan(0);
    expect(bars[1].querySelector('title')?.textContent).toContain(
      '1.50 h used'
    );
    await act(async () => panel.dispose());
  });

  it("shows an admin everyone's usage with a user column", async () => {
    const panel = await shown({
      usage: EVERYONE,
      me: { name: 'carol', admin: true, groups: [] }
    });
    expect(texts(panel, 'h2')).toEqual(["Everyone's usage (all time)"]);
    expect(texts(panel, 'thead th')[0]).toBe('User');
    const rows = [...panel.node.querySelectorAll<HTMLElement>('tbody tr')];
    expect(rows.map(r => r.dataset.user)).toEqual(['alice', 'bob']);
    expect(texts(panel, '.jp-ClusterUsage-used')).toEqual(['1.50 h', '2.5 s']);
    const widths = [
      ...panel.node.querySelectorAll<HTMLElement>('.jp-ClusterAdmin-bar')
    ].map(b => b.style.width);
    expect(widths).toEqual(['100%', '50%']);
    await act(async () => panel.dispose());
  });

  it('says what failed, and that there is nothing yet', async () => {
    const failing = await shown({
      usage: new ClusterAPIError('server down', 502)
    });
    expect(texts(failing, '.jp-mod-error')).toEqual(['server down']);
    await act(async () => failing.dispose());
    const empty = await shown({ usage: { ...MINE, users: [], sessions: [] } });
    expect(texts(empty, '.jp-ClusterAdmin-empty')).toEqual(['No usage yet.']);
    expect(empty.node.querySelector('.jp-ClusterUsage-chart')).toBeNull();
    await act(async () => empty.dispose());
  });

  it('charts only the latest sessions', async () => {
    const many = Array.from({ length: CHART_SESSIONS + 5 }, (_, i) =>
      sessionRow(`s${i}`, 'alice', i, 10)
    );
    const panel = await shown({ usage: { ...MINE, sessions: many } });
    const ids = [...panel.node.querySelectorAll<SVGGElement>('svg g')].map(
      g => g.dataset.sessionId
    );
    expect(ids).toHaveLength(CHART_SESSIONS);
    expect(ids[ids.length - 1]).toBe(`s${CHART_SESSIONS + 4}`);
    await act(async () => panel.dispose());
  });

  it('formats measured CPU time', () => {
    expect(cpuTime(undefined)).toBe('–');
    expect(cpuTime(1.25)).toBe('1.3 s');
    expect(cpuTime(90)).toBe('1.5 min');
    expect(cpuTime(7200)).toBe('2.00 h');
  });
});

describe('the Cluster Usage command', () => {
  it('is for everyone, in the palette, and opens one tab', async () => {
    const commands = new CommandRegistry();
    const added: Widget[] = [];
    const shell = {
      add: (w: Widget) => {
        added.push(w);
        Widget.attach(w, document.body);
      },
      activateById: jest.fn()
    };
    const palette = { addItem: jest.fn() };
    const fake = client({ usage: MINE });
    addUsageCommand({ commands, shell } as any, fake, palette);
    expect(commands.label(USAGE_COMMAND)).toBe('Cluster Usage');
    expect(commands.isVisible(USAGE_COMMAND)).toBe(true);
    expect(palette.addItem).toHaveBeenCalledWith(
      expect.objectContaining({ command: USAGE_COMMAND })
    );
    await act(async () => {
      await commands.execute(USAGE_COMMAND);
    });
    await act(async () => {
      await commands.execute(USAGE_COMMAND);
    });
    expect(added).toHaveLength(1);
    expect(shell.activateById).toHaveBeenCalledWith('jp-cluster-usage');
    expect(fake.calls).toContain('usage');
    await act(async () => added[0].dispose());
  });
});

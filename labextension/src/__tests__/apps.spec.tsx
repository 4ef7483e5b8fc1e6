import { CommandRegistry } from '@lumino/commands';
import { Widget } from '@lumino/widgets';

import { ClusterClient, ISession } from '../api';
import { appsOf, appTabId, appUrl, openApp, validPort } from '../apps';
import { CommandIDs } from '../commands';
import type { IContext } from '../context';
import { SessionsModel } from '../sessions';
import { ClusterSidebar } from '../sidebar';
import { FakeStatsClient, session } from './fixtures';
import { act, render } from './render';

describe('apps in main1', () => {
  it('are reached at the proxy URL of their session and port', () => {
    expect(appUrl('/user/a/', 'abc-1', 6006)).toBe(
      '/user/a/cluster/proxy/abc-1/6006/'
    );
    expect([1, 6006, 65535].every(validPort)).toBe(true);
    expect([0, 65536, 1.5, NaN, '80'].some(validPort)).toBe(false);
    expect(appsOf(session({ apps: { tensorboard: 6006, web: 8000 } }))).toEqual(
      [
        ['tensorboard', 6006],
        ['web', 8000]
      ]
    );
    expect(appsOf(session())).toEqual([]);
  });

  it('open as one Lab tab per port, focused again when open', () => {
    const added: Widget[] = [];
    const activated: string[] = [];
    const ctx = {
      app: {
        shell: {
          widgets: () => added[Symbol.iterator](),
          add: (w: Widget) => added.push(w),
          activateById: (id: string) => activated.push(id)
        }
      },
      model: { client: { serverSettings: { baseUrl: '/base/' } } }
    } as unknown as IContext;
    const s = session({ status: 'RUNNING', apps: { tensorboard: 6006 } });
    const tab = openApp(ctx, s, 6006, { name: 'tensorboard' })!;
    expect(tab.id).toBe(appTabId(s.id, 6006));
    expect(tab.title.label).toBe(`tensorboard · ${s.name}`);
    const iframe = tab.node.querySelector('iframe')!;
    expect(iframe.getAttribute('src')).toBe(
      `/base/cluster/proxy/${s.id}/6006/`
    );
    expect(iframe.getAttribute('sandbox')).toMatch(/allow-scripts/);
    expect(openApp(ctx, s, 6006)).toBe(tab);
    expect(added).toHaveLength(1);
    expect(activated).toEqual([tab.id, tab.id]);
    expect(() => openApp(ctx, s, 70000)).toThrow(/1 to 65535/);
    const opened = jest.spyOn(window, 'open').mockImplementation(() => null);
    expect(openApp(ctx, s, 8000, { browser: true })).toBeNull();
    expect(opened).toHaveBeenCalledWith(
      `/base/cluster/proxy/${s.id}/8000/`,
      '_blank',
      'noopener'
    );
    tab.dispose();
  });

  it('are listed in the sidebar while the session runs', async () => {
    const client = Object.assign(new FakeStatsClient(), {
      agents: () => Promise.resolve([]),
      listSessions: jest.fn(async (): Promise<ISession[]> => [])
    });
    const model = new SessionsModel({
      client: client as unknown as ClusterClient
    });
    const commands = new CommandRegistry();
    const calls: { id: string; args: any }[] = [];
    commands.addCommand(CommandIDs.openApp, {
      execute: args => {
        calls.push({ id: CommandIDs.openApp, args });
      }
    });
    const sidebar = new ClusterSidebar(model, commands);
    Widget.attach(sidebar, document.body);
    const s = session({ status: 'RUNNING', apps: { tensorboard: 6006 } });
    model.upsert(s);
    await render(sidebar);
    const item = sidebar.node.querySelector('[data-app="tensorboard"]')!;
    expect(item.textContent).toMatch(/tensorboard :6006/);
    const [tabButton, browserButton] = item.querySelectorAll('button');
    await act(async () => tabButton.click());
    await act(async () => browserButton.click());
    const args = { sessionId: s.id, port: 6006, name: 'tensorboard' };
    expect(calls.map(c => c.args)).toEqual([args, { ...args, browser: true }]);
    model.upsert({ ...s, status: 'TERMINATED' });
    await render(sidebar);
    expect(sidebar.node.querySelector('.jp-ClusterSession-apps')).toBeNull();
    sidebar.dispose();
    model.dispose();
  });
});

import { WidgetTracker } from '@jupyterlab/apputils';
import { KernelAPI, ServerConnection } from '@jupyterlab/services';
import { CommandRegistry } from '@lumino/commands';

import { openLogs, openNotebook, terminate } from '../actions';
import { ClusterClient } from '../api';
import { IContext } from '../context';
import { LogPanel, LogView } from '../logs';
import { SessionsModel } from '../sessions';
import { readSettings } from '../settings';
import { session } from './fixtures';

function context(client: Partial<ClusterClient> = {}): {
  ctx: IContext;
  commands: CommandRegistry;
  shell: { add: jest.Mock; activateById: jest.Mock };
  refreshRunning: jest.Mock;
} {
  const commands = new CommandRegistry();
  const shell = { add: jest.fn(), activateById: jest.fn() };
  const refreshRunning = jest.fn(async () => undefined);
  const app: any = {
    commands,
    shell,
    serviceManager: {
      serverSettings: ServerConnection.makeSettings({ baseUrl: 'http://h/' }),
      sessions: { refreshRunning }
    }
  };
  const model = new SessionsModel({ client: client as ClusterClient });
  const ctx: IContext = {
    app,
    model,
    settings: () => readSettings({ logTail: 10 }),
    logs: new WidgetTracker<LogPanel>({ namespace: 'test-cluster-logs' }),
    showSidebar: jest.fn()
  };
  return { ctx, commands, shell, refreshRunning };
}

describe('openNotebook', () => {
  afterEach(() => jest.restoreAllMocks());

  it('binds a new notebook to the kernel, then opens it', async () => {
    const { ctx, commands, refreshRunning } = context();
    jest
      .spyOn(KernelAPI, 'getKernelModel')
      .mockResolvedValue({ id: 'k1', name: 'jupyter-cluster-session' } as any);
    const request = jest
      .spyOn(ServerConnection, 'makeRequest')
      .mockResolvedValue({ ok: true, status: 201 } as Response);
    const opened: any[] = [];
    commands.addCommand('docmanager:new-untitled', {
      execute: () => ({ path: 'Untitled.ipynb', name: 'Untitled.ipynb' })
    });
    commands.addCommand('docmanager:open', {
      execute: args => {
        opened.push(args);
      }
    });
    await openNotebook(ctx, session({ kernel_id: 'k1' }));
    const [url, init] = request.mock.calls[0];
    expect(url).toBe('http://h/api/sessions');
    expect(JSON.parse(init.body as string)).toEqual({
      path: 'Untitled.ipynb',
      type: 'notebook',
      name: 'Untitled.ipynb',
      kernel: { id: 'k1', name: 'jupyter-cluster-session' }
    });
    expect(refreshRunning).toHaveBeenCalled();
    expect(opened).toEqual([{ path: 'Untitled.ipynb', factory: 'Notebook' }]);
    ctx.model.dispose();
  });

  it('says when there is no kernel', async () => {
    const { ctx } = context();
    await expect(
      openNotebook(ctx, session({ kernel_id: null }))
    ).rejects.toThrow(/has no kernel/);
    jest.spyOn(KernelAPI, 'getKernelModel').mockResolvedValue(undefined);
    await expect(openNotebook(ctx, session())).rejects.toThrow(/not running/);
    ctx.model.dispose();
  });
});

describe('openLogs', () => {
  it('makes one panel per session and shows the asked tab', async () => {
    const { ctx, shell } = context({} as any);
    const s = session();
    const panel = await openLogs(ctx, s, 'sub2');
    expect(shell.add).toHaveBeenCalledTimes(1);
    expect((panel.content.currentWidget as LogView).host).toBe('sub2');
    expect(panel.options).toEqual({ tail: 10, maxLines: 10000 });
    const again = await openLogs(ctx, s, 'main1');
    expect(again).toBe(panel);
    expect(shell.add).toHaveBeenCalledTimes(1);
    expect((panel.content.currentWidget as LogView).host).toBe('main1');
    expect(shell.activateById).toHaveBeenCalledWith(panel.id);
    panel.dispose();
    ctx.model.dispose();
  });

  it('notes in an open panel that its session ended', async () => {
    const { ctx } = context({} as any);
    const s = session({ status: 'RUNNING' });
    const panel = await openLogs(ctx, s, 'sub1');
    expect((panel.content.currentWidget as LogView).kept).toBe(false);
    await openLogs(ctx, { ...s, status: 'TERMINATED', ended_at: 5 }, 'sub1');
    expect((panel.content.currentWidget as LogView).kept).toBe(true);
    panel.dispose();
    ctx.model.dispose();
  });
});

describe('terminate', () => {
  it('asks the server to terminate', async () => {
    const terminateApi = jest.fn(async () => undefined);
    const { ctx } = context({ terminate: terminateApi } as any);
    expect(await terminate(ctx, session({ status: 'RUNNING' }), false)).toBe(
      true
    );
    expect(terminateApi).toHaveBeenCalledWith(session().id);
    ctx.model.dispose();
  });

  it('reports a refusal', async () => {
    const terminateApi = jest.fn(async () => {
      throw new Error('agent unreachable');
    });
    const { ctx } = context({ terminate: terminateApi } as any);
    expect(await terminate(ctx, session(), false)).toBe(false);
    ctx.model.dispose();
  });
});

import { DocumentManager } from '@jupyterlab/docmanager';
import { DocumentRegistry } from '@jupyterlab/docregistry';
import { ServerConnection } from '@jupyterlab/services';
import { ServiceManagerMock } from '@jupyterlab/services/lib/testutils';
import { CommandRegistry } from '@lumino/commands';
import { Signal } from '@lumino/signaling';

import plugins from '../index';
import { ClusterFoldersDrive } from '../folders-drive';
import { FoldersBrowser } from '../folders-panel';
import { SHOW_FOLDERS } from '../folders-plugin';

describe('the data-folders plugin', () => {
  it('adds the drive, the panel with its toolbar, and a command', () => {
    const plugin = plugins.find(p => p.id === 'jupyter-cluster:folders')!;
    expect(plugin.autoStart).toBe(true);
    const services = new ServiceManagerMock();
    const docManager = new DocumentManager({
      registry: new DocumentRegistry(),
      manager: services,
      opener: { open: jest.fn(), opened: new Signal<any, any>({}) } as any
    });
    const addDrive = jest.fn();
    const shell = { add: jest.fn(), activateById: jest.fn() };
    const tracker = { add: jest.fn().mockResolvedValue(undefined) };
    const app: any = {
      commands: new CommandRegistry(),
      shell,
      serviceManager: {
        serverSettings: ServerConnection.makeSettings({ baseUrl: 'http://h/' }),
        contents: { addDrive }
      }
    };
    plugin.activate(app, docManager, { tracker }, null, null);

    expect(addDrive).toHaveBeenCalledWith(expect.any(ClusterFoldersDrive));
    expect(addDrive.mock.calls[0][0].name).toBe('ClusterFolders');
    const [panel, area] = shell.add.mock.calls[0];
    expect(area).toBe('left');
    expect(panel).toBeInstanceOf(FoldersBrowser);
    expect(panel.id).toBe('jp-cluster-folders');
    // Not before the panel's first focus (see folders-plugin).
    expect(tracker.add).not.toHaveBeenCalled();
    expect([...panel.toolbar.names()]).toEqual([
      'new-folder',
      'new-notebook',
      'upload',
      'rename',
      'delete',
      'download',
      'refresh'
    ]);
    void app.commands.execute(SHOW_FOLDERS);
    expect(shell.activateById).toHaveBeenCalledWith('jp-cluster-folders');
    panel.dispose();
  });

  it('joins the file-browser tracker at its first focus, which it keeps', async () => {
    const plugin = plugins.find(p => p.id === 'jupyter-cluster:folders')!;
    const services = new ServiceManagerMock();
    const docManager = new DocumentManager({
      registry: new DocumentRegistry(),
      manager: services,
      opener: { open: jest.fn(), opened: new Signal<any, any>({}) } as any
    });
    const shell = { add: jest.fn(), activateById: jest.fn() };
    const focusedWhenAdded: (Element | null)[] = [];
    const tracker = {
      add: jest.fn().mockImplementation(async () => {
        focusedWhenAdded.push(document.activeElement);
      })
    };
    const app: any = {
      commands: new CommandRegistry(),
      shell,
      serviceManager: {
        serverSettings: ServerConnection.makeSettings({ baseUrl: 'http://h/' }),
        contents: { addDrive: jest.fn() }
      }
    };
    plugin.activate(app, docManager, { tracker }, null, null);
    const [panel] = shell.add.mock.calls[0];
    document.body.appendChild(panel.node);
    const input = document.createElement('input');
    panel.node.appendChild(input);

    input.focus();
    await new Promise(resolve => setTimeout(resolve, 0));
    expect(tracker.add).toHaveBeenCalledTimes(1);
    expect(tracker.add).toHaveBeenCalledWith(panel);
    // It joined with the focus outside, and the focus went back.
    expect(focusedWhenAdded).toEqual([document.body]);
    expect(document.activeElement).toBe(input);

    input.blur();
    input.focus();
    await new Promise(resolve => setTimeout(resolve, 0));
    expect(tracker.add).toHaveBeenCalledTimes(1);
    panel.node.remove();
    panel.dispose();
  });
});

import { ServerConnection } from '@jupyterlab/services';
import { CommandRegistry } from '@lumino/commands';

import { CommandIDs, PALETTE_COMMANDS } from '../commands';
import plugins from '../index';
import { readSettings } from '../settings';
import { USAGE_COMMAND } from '../usagecommand';

const [plugin] = plugins;

describe('the plugin', () => {
  it('adds the sidebar, the commands, a launcher tile and palette items', () => {
    const commands = new CommandRegistry();
    const shell = { add: jest.fn(), activateById: jest.fn() };
    const docRegistry = { addWidgetExtension: jest.fn() };
    const app: any = {
      commands,
      shell,
      docRegistry,
      serviceManager: {
        serverSettings: ServerConnection.makeSettings({ baseUrl: 'http://h/' })
      },
      restored: new Promise(() => undefined)
    };
    const launcher = { add: jest.fn() };
    const palette = { addItem: jest.fn() };
    plugin.activate(app, launcher, palette, null, null, null);

    expect(plugin.id).toBe('jupyter-cluster:plugin');
    expect(plugin.autoStart).toBe(true);
    for (const id of Object.values(CommandIDs)) {
      expect(commands.hasCommand(id)).toBe(true);
    }
    expect(commands.label(CommandIDs.launch, { isLauncher: true })).toBe(
      'Cluster Session'
    );
    expect(commands.label(CommandIDs.launch, { isPalette: true })).toBe(
      'Launch Cluster Session…'
    );
    expect(commands.icon(CommandIDs.launch, { isLauncher: true })).toBeTruthy();
    expect(launcher.add).toHaveBeenCalledWith({
      command: CommandIDs.launch,
      category: 'Cluster',
      rank: 0,
      args: { isLauncher: true }
    });
    expect(palette.addItem.mock.calls.map(c => c[0].command)).toEqual([
      USAGE_COMMAND, // "Cluster Usage", for everyone
      ...PALETTE_COMMANDS
    ]);
    expect(docRegistry.addWidgetExtension).toHaveBeenCalledWith(
      'Notebook',
      expect.objectContaining({ createNew: expect.any(Function) })
    );
    const [sidebar, area] = shell.add.mock.calls[0];
    expect(area).toBe('left');
    expect(sidebar.id).toBe('jp-cluster-sessions');
    commands.execute(CommandIDs.showSessions);
    expect(shell.activateById).toHaveBeenCalledWith('jp-cluster-sessions');
    sidebar.model.dispose();
    sidebar.dispose();
  });

  it('reads settings over their defaults', () => {
    expect(readSettings(null).logTail).toBe(1000);
    expect(
      readSettings({ logTail: 5, launchDefaults: { size: 3 } })
    ).toMatchObject({
      logTail: 5,
      launchDefaults: { size: 3 },
      confirmTerminate: true
    });
  });
});

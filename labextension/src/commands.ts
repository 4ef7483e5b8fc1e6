/**
 * The extension's commands (palette, launcher, menus, sidebar buttons).
 * Commands that act on a session or a container take `sessionId` (and `host`);
 * from the palette, without them, they ask which one (./pickers). What they do
 * lives in ./actions, loaded when a command first runs.
 */

import { JupyterFrontEnd } from '@jupyterlab/application';
import { showErrorMessage, WidgetTracker } from '@jupyterlab/apputils';
import { LabIcon, refreshIcon } from '@jupyterlab/ui-components';
import type { CommandRegistry } from '@lumino/commands';
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';

import { askPort, openApp } from './apps';
import type { IContext } from './context';
import { getTrans } from './i18n';
import { clusterIcon } from './icons';
import type { LogPanel } from './logs';
import { pickContainer, pickSession } from './pickers';
import { SessionsModel, USABLE } from './sessions';
import { IClusterSettings } from './settings';

export namespace CommandIDs {
  export const launch = 'cluster:launch';
  export const showSessions = 'cluster:show-sessions';
  export const refresh = 'cluster:refresh';
  export const openNotebook = 'cluster:open-notebook';
  export const terminate = 'cluster:terminate';
  export const openLogs = 'cluster:open-logs';
  export const openTerminal = 'cluster:open-terminal';
  export const openAllTerminals = 'cluster:open-all-terminals';
  export const openApp = 'cluster:open-app';
}

/** The commands listed in the palette, in order. */
export const PALETTE_COMMANDS = [
  CommandIDs.launch,
  CommandIDs.showSessions,
  CommandIDs.refresh,
  CommandIDs.openNotebook,
  CommandIDs.openLogs,
  CommandIDs.openTerminal,
  CommandIDs.openAllTerminals,
  CommandIDs.openApp,
  CommandIDs.terminate
];

/** What the commands do, loaded (a chunk of its own) when one first runs. */
const loadActions = () => import('./actions');

/** The module ./actions, as `loadActions` gives it. */
type Actions = Awaited<ReturnType<typeof loadActions>>;

/** What the commands need from the plugin. */
export interface ICommandsOptions {
  app: JupyterFrontEnd;
  model: SessionsModel;
  settings: () => IClusterSettings;
  showSidebar: () => void;
}

/** Register the commands. */
export function addCommands(options: ICommandsOptions): void {
  const trans = getTrans();
  const { app, model } = options;
  const { commands } = app;
  const logs = new WidgetTracker<LogPanel>({ namespace: 'cluster-logs' });
  const ctx: IContext = { ...options, logs };

  const sessionArgs = {
    type: 'object',
    properties: {
      sessionId: {
        type: 'string',
        description: trans.__('Id of the cluster session')
      }
    }
  };
  const containerArgs = {
    ...sessionArgs,
    properties: {
      ...sessionArgs.properties,
      host: {
        type: 'string',
        description: trans.__('Host of the container: main1, sub1, …')
      }
    }
  };
  const noArgs = { args: { type: 'object', properties: {} } };
  const fail = (title: string) => (error: unknown) => {
    void showErrorMessage(title, error as Error);
  };
  /** The icon, except in the palette. */
  const iconOf = (icon: LabIcon) => (args: ReadonlyPartialJSONObject) =>
    args.isPalette ? undefined : icon;

  /** A command on what `pick` gives (asked for when the args do not say). */
  function addPickerCommand<T>(id: string, spec: IPickerCommand<T>): void {
    commands.addCommand(id, {
      label: spec.label,
      caption: spec.caption,
      execute: async args => {
        const picked = await spec.pick(args);
        if (picked) {
          const done = spec.run(await loadActions(), picked);
          await (spec.failTitle ? done.catch(fail(spec.failTitle)) : done);
        }
      },
      describedBy: { args: spec.args }
    });
  }

  commands.addCommand(CommandIDs.launch, {
    label: args =>
      args.isLauncher
        ? trans.__('Cluster Session')
        : trans.__('Launch Cluster Session…'),
    caption: trans.__(
      'Launch N containers (main1, sub1, …) with a kernel in main1'
    ),
    icon: iconOf(clusterIcon),
    execute: async () => {
      try {
        await (await loadActions()).launch(ctx);
      } catch (error) {
        fail(trans.__('Could not launch a cluster session'))(error);
      }
    },
    describedBy: noArgs
  });

  commands.addCommand(CommandIDs.showSessions, {
    label: trans.__('Show Cluster Sessions'),
    caption: trans.__('Show the Cluster Sessions sidebar'),
    icon: iconOf(clusterIcon),
    execute: () => options.showSidebar(),
    describedBy: noArgs
  });

  commands.addCommand(CommandIDs.refresh, {
    label: trans.__('Refresh Cluster Sessions'),
    icon: iconOf(refreshIcon),
    execute: () => model.refresh(),
    describedBy: noArgs
  });

  addPickerCommand(CommandIDs.openNotebook, {
    label: trans.__('Open Notebook on Cluster Session…'),
    caption: trans.__('A new notebook on the kernel that runs in main1'),
    args: sessionArgs,
    pick: args =>
      pickSession(
        ctx,
        args,
        trans.__('Open a notebook on which cluster session?'),
        s => s.kernel_state === 'running'
      ),
    run: (a, session) => a.openNotebook(ctx, session),
    failTitle: trans.__('Could not open a notebook')
  });

  addPickerCommand(CommandIDs.terminate, {
    label: trans.__('Terminate Cluster Session…'),
    caption: trans.__('Remove every container of a session'),
    args: sessionArgs,
    pick: args =>
      pickSession(ctx, args, trans.__('Terminate which cluster session?')),
    run: (a, session) =>
      a.terminate(ctx, session, ctx.settings().confirmTerminate)
  });

  addPickerCommand(CommandIDs.openLogs, {
    label: trans.__('Show Cluster Container Logs…'),
    caption: trans.__('The log of a container, streaming'),
    args: containerArgs,
    pick: args =>
      pickContainer(ctx, args, trans.__('Show the log of which container?')),
    run: (a, { session, host }) => a.openLogs(ctx, session, host),
    failTitle: trans.__('Could not show the log')
  });

  addPickerCommand(CommandIDs.openTerminal, {
    label: trans.__('Open Terminal in Cluster Container…'),
    caption: trans.__('A terminal as work in main1 or a sub container'),
    args: containerArgs,
    pick: args =>
      pickContainer(
        ctx,
        args,
        trans.__('Open a terminal in which container?'),
        (s, host) =>
          USABLE.has(s.status) &&
          s.containers.some(c => c.host === host && c.status === 'RUNNING')
      ),
    run: (a, { session, host }) => a.openTerminal(ctx, session, host),
    failTitle: trans.__('Could not open a terminal')
  });

  addPickerCommand(CommandIDs.openAllTerminals, {
    label: trans.__('Open terminals in every container'),
    caption: trans.__(
      'A terminal tab in each container of a session: main1, sub1, …'
    ),
    args: sessionArgs,
    pick: args =>
      pickSession(
        ctx,
        args,
        trans.__('Open terminals in every container of which session?'),
        s =>
          USABLE.has(s.status) && s.containers.some(c => c.status === 'RUNNING')
      ),
    run: (a, session) => a.openAllTerminals(ctx, session),
    failTitle: trans.__('Could not open terminals')
  });

  commands.addCommand(CommandIDs.openApp, {
    label: args =>
      args.name
        ? trans.__('Open %1', String(args.name))
        : trans.__('Open Port in main1…'),
    caption: trans.__(
      'A web app listening in main1 (e.g. TensorBoard), as a tab, through the server'
    ),
    execute: async args => {
      const session = await pickSession(
        ctx,
        args,
        trans.__('Open a port in main1 of which session?'),
        s => USABLE.has(s.status)
      );
      if (!session) {
        return;
      }
      const port =
        typeof args.port === 'number' ? args.port : await askPort(session);
      if (port === null) {
        return;
      }
      try {
        openApp(ctx, session, port, {
          name: typeof args.name === 'string' ? args.name : undefined,
          browser: args.browser === true
        });
      } catch (error) {
        fail(trans.__('Could not open the port'))(error);
      }
    },
    describedBy: {
      args: {
        ...sessionArgs,
        properties: {
          ...sessionArgs.properties,
          port: { type: 'number', description: trans.__('Port in main1') },
          name: { type: 'string', description: trans.__('Name of the app') },
          browser: {
            type: 'boolean',
            description: trans.__('In a browser tab instead of a Lab tab')
          }
        }
      }
    }
  });
}

/** A command that acts on a session or a container it picks. */
interface IPickerCommand<T> {
  label: string;
  caption: string;
  /** The schema of the command's args. */
  args: CommandRegistry.Description['args'];
  /** What to act on: the one the args name, or one the user picks. */
  pick: (args: ReadonlyPartialJSONObject) => Promise<T | null>;
  /** Act on it with the lazily loaded actions. */
  run: (actions: Actions, picked: T) => Promise<unknown>;
  /** Show a failure of `run` under this title (else `run` reports its own). */
  failTitle?: string;
}

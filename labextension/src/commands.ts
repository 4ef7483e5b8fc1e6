/**
 * The extension's commands (palette, launcher, menus, sidebar buttons).
 * Commands that act on a session or a container take `sessionId` (and `host`);
 * from the palette, without them, they ask which one. What they do lives in
 * ./actions, loaded when a command first runs.
 */

import { JupyterFrontEnd } from '@jupyterlab/application';
import {
  InputDialog,
  showErrorMessage,
  WidgetTracker
} from '@jupyterlab/apputils';
import { refreshIcon } from '@jupyterlab/ui-components';

import type { IContext } from './actions';
import { ISession } from './api';
import { getTrans } from './i18n';
import { clusterIcon } from './icons';
import type { LogPanel } from './logs';
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
}

/** The commands listed in the palette, in order. */
export const PALETTE_COMMANDS = [
  CommandIDs.launch,
  CommandIDs.showSessions,
  CommandIDs.refresh,
  CommandIDs.openNotebook,
  CommandIDs.openLogs,
  CommandIDs.openTerminal,
  CommandIDs.terminate
];

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
  const actions = () => import('./actions');

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
    type: 'object',
    properties: {
      sessionId: {
        type: 'string',
        description: trans.__('Id of the cluster session')
      },
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

  commands.addCommand(CommandIDs.launch, {
    label: args =>
      args.isLauncher
        ? trans.__('Cluster Session')
        : trans.__('Launch Cluster Session…'),
    caption: trans.__(
      'Launch N containers (main1, sub1, …) with a kernel in main1'
    ),
    icon: args => (args.isPalette ? undefined : clusterIcon),
    execute: async () => {
      try {
        await (await actions()).launch(ctx);
      } catch (error) {
        fail(trans.__('Could not launch a cluster session'))(error);
      }
    },
    describedBy: noArgs
  });

  commands.addCommand(CommandIDs.showSessions, {
    label: trans.__('Show Cluster Sessions'),
    caption: trans.__('Show the Cluster Sessions sidebar'),
    icon: args => (args.isPalette ? undefined : clusterIcon),
    execute: () => options.showSidebar(),
    describedBy: noArgs
  });

  commands.addCommand(CommandIDs.refresh, {
    label: trans.__('Refresh Cluster Sessions'),
    icon: args => (args.isPalette ? undefined : refreshIcon),
    execute: () => model.refresh(),
    describedBy: noArgs
  });

  commands.addCommand(CommandIDs.openNotebook, {
    label: trans.__('Open Notebook on Cluster Session…'),
    caption: trans.__('A new notebook on the kernel that runs in main1'),
    execute: async args => {
      const session = await pickSession(
        ctx,
        args.sessionId as string | undefined,
        trans.__('Open a notebook on which cluster session?'),
        s => s.kernel_state === 'running'
      );
      if (session) {
        await (
          await actions()
        )
          .openNotebook(ctx, session)
          .catch(fail(trans.__('Could not open a notebook')));
      }
    },
    describedBy: { args: sessionArgs }
  });

  commands.addCommand(CommandIDs.terminate, {
    label: trans.__('Terminate Cluster Session…'),
    caption: trans.__('Remove every container of a session'),
    execute: async args => {
      const session = await pickSession(
        ctx,
        args.sessionId as string | undefined,
        trans.__('Terminate which cluster session?')
      );
      if (session) {
        await (
          await actions()
        ).terminate(ctx, session, ctx.settings().confirmTerminate);
      }
    },
    describedBy: { args: sessionArgs }
  });

  commands.addCommand(CommandIDs.openLogs, {
    label: trans.__('Show Cluster Container Logs…'),
    caption: trans.__('The log of a container, streaming'),
    execute: async args => {
      const picked = await pickContainer(
        ctx,
        args.sessionId as string | undefined,
        args.host as string | undefined,
        trans.__('Show the log of which container?'),
        () => true
      );
      if (picked) {
        await (
          await actions()
        )
          .openLogs(ctx, picked.session, picked.host)
          .catch(fail(trans.__('Could not show the log')));
      }
    },
    describedBy: { args: containerArgs }
  });

  commands.addCommand(CommandIDs.openTerminal, {
    label: trans.__('Open Terminal in Cluster Container…'),
    caption: trans.__('A terminal as work in main1 or a sub container'),
    execute: async args => {
      const picked = await pickContainer(
        ctx,
        args.sessionId as string | undefined,
        args.host as string | undefined,
        trans.__('Open a terminal in which container?'),
        (s, host) =>
          USABLE.has(s.status) &&
          s.containers.some(c => c.host === host && c.status === 'RUNNING')
      );
      if (picked) {
        await (
          await actions()
        )
          .openTerminal(ctx, picked.session, picked.host)
          .catch(fail(trans.__('Could not open a terminal')));
      }
    },
    describedBy: { args: containerArgs }
  });
}

async function known(ctx: IContext, id: string): Promise<ISession> {
  return ctx.model.get(id) ?? (await ctx.model.client.getSession(id));
}

/** The session `id`, or one the user picks among those that `ok`. */
async function pickSession(
  ctx: IContext,
  id: string | undefined,
  question: string,
  ok: (s: ISession) => boolean = () => true
): Promise<ISession | null> {
  const trans = getTrans();
  if (id) {
    return known(ctx, id);
  }
  const sessions = ctx.model.sessions.filter(ok);
  if (!sessions.length) {
    await showErrorMessage(
      trans.__('No cluster session'),
      trans.__('There is no cluster session for this. Launch one first.')
    );
    return null;
  }
  const labels = sessions.map(
    s => `${s.name} (${s.status}, ${s.containers.length})`
  );
  const result = await InputDialog.getItem({
    title: question,
    items: labels
  });
  if (!result.button.accept || result.value === null) {
    return null;
  }
  return sessions[labels.indexOf(result.value)] ?? null;
}

/** The container `host` of session `id`, or one the user picks. */
async function pickContainer(
  ctx: IContext,
  id: string | undefined,
  host: string | undefined,
  question: string,
  ok: (s: ISession, host: string) => boolean
): Promise<{ session: ISession; host: string } | null> {
  const trans = getTrans();
  if (id && host) {
    return { session: await known(ctx, id), host };
  }
  const choices: { session: ISession; host: string; label: string }[] = [];
  for (const session of ctx.model.sessions) {
    if (id && session.id !== id) {
      continue;
    }
    for (const container of session.containers) {
      if (ok(session, container.host)) {
        choices.push({
          session,
          host: container.host,
          label: `${session.name} / ${container.host} (${container.status})`
        });
      }
    }
  }
  if (!choices.length) {
    await showErrorMessage(
      trans.__('No container'),
      trans.__('There is no running cluster container for this.')
    );
    return null;
  }
  const result = await InputDialog.getItem({
    title: question,
    items: choices.map(c => c.label)
  });
  if (!result.button.accept || result.value === null) {
    return null;
  }
  return choices.find(c => c.label === result.value) ?? null;
}

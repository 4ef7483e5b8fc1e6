/**
 * What the commands do: launch (the dialog, the request, the progress, the
 * notebook), open a notebook on a session's kernel, open terminals into its
 * containers (./terminals), show a container's log, terminate a session.
 * Loaded when a command first runs.
 */

import { Dialog, showDialog, showErrorMessage } from '@jupyterlab/apputils';
import { URLExt } from '@jupyterlab/coreutils';
import { KernelAPI, ServerConnection } from '@jupyterlab/services';

import { ClusterAPIError, IAgent, IImage, ISession } from './api';
import type { IContext } from './context';
import { LaunchDialog, LaunchForm } from './dialog';
import { ILaunchValues, initialValues, toRequest } from './form';
import type { IServerError } from './formview';
import { getTrans } from './i18n';
import { hasEnded, ILogOptions, LogPanel } from './logs';
import { followLaunch } from './progress';
import { LiveNotification } from './toast';

export { openAllTerminals, openTerminal } from './terminals';

/**
 * The launch dialog, then the launch: the form is shown again (with the
 * server's message) when the server refuses the values.
 */
export async function launch(ctx: IContext): Promise<ISession | null> {
  const trans = getTrans();
  const client = ctx.model.client;
  const settings = ctx.settings();
  const [options, agents, images] = await Promise.all([
    client.launchOptions(),
    client.agents().catch((): IAgent[] => []),
    client.images().catch((): IImage[] => [])
  ]);
  let values: ILaunchValues = initialValues(
    options,
    settings.launchDefaults,
    settings.openNotebookOnLaunch
  );
  let serverError: IServerError | null = null;
  for (;;) {
    // The dialog made by ask() takes the form as its body and disposes it.
    // eslint-disable-next-line jupyter/require-disposable-ownership
    const form = new LaunchForm({
      options,
      values,
      agents,
      images,
      serverError,
      check: (v, signal) => client.checkLaunch(toRequest(v), signal)
    });
    const poll = setInterval(() => {
      client
        .agents()
        .then(a => form.setAgents(a))
        .catch(() => undefined);
    }, 5000);
    let result: Dialog.IResult<ILaunchValues>;
    try {
      result = await ask(form);
    } finally {
      clearInterval(poll);
    }
    if (!result.button.accept || !result.value) {
      return null;
    }
    values = result.value;
    let session: ISession;
    try {
      const request = toRequest(values);
      if (request.start_kernel) {
        // Its notebook opens in the server's root folder (openNotebook): the
        // kernel starts there too, wherever the session can mount that folder.
        request.notebook_dir = '';
      }
      session = await client.launch(request);
    } catch (error) {
      if (
        error instanceof ClusterAPIError &&
        [400, 409].includes(error.status)
      ) {
        serverError = { field: error.field, message: error.message };
        continue;
      }
      throw error;
    }
    ctx.model.upsert(session);
    ctx.showSidebar();
    const wantKernel = values.start_kernel;
    followLaunch(ctx.model, session, {
      wantKernel,
      onReady: ready => {
        if (wantKernel) {
          openNotebook(ctx, ready).catch(error =>
            showErrorMessage(trans.__('Could not open a notebook'), error)
          );
        }
      },
      onCancel: s => void terminate(ctx, s, false)
    });
    return session;
  }
}

/** Show the launch dialog around `form` (it disposes both when it closes). */
function ask(form: LaunchForm): Promise<Dialog.IResult<ILaunchValues>> {
  const dialog = new LaunchDialog(form);
  return dialog.launch();
}

/** A new notebook in the server's root, on the session's kernel. */
export async function openNotebook(
  ctx: IContext,
  session: ISession,
  cwd = ''
): Promise<void> {
  const trans = getTrans();
  if (!session.kernel_id) {
    throw new Error(
      trans.__(
        'Session %1 has no kernel (it was launched without one).',
        session.name
      )
    );
  }
  const { commands, serviceManager } = ctx.app;
  const kernel = await KernelAPI.getKernelModel(
    session.kernel_id,
    serviceManager.serverSettings
  );
  if (!kernel) {
    throw new Error(
      trans.__('The kernel of session %1 is not running.', session.name)
    );
  }
  const model = await commands.execute('docmanager:new-untitled', {
    path: cwd,
    type: 'notebook'
  });
  // Bind the notebook's path to the kernel first: the notebook then finds its
  // Jupyter session and connects to it. (Opening it with a kernel id instead can
  // make JupyterLab start two sessions for the path and delete the first one,
  // which shuts the shared kernel down.)
  const settings = serviceManager.serverSettings;
  const response = await ServerConnection.makeRequest(
    URLExt.join(settings.baseUrl, 'api/sessions'),
    {
      method: 'POST',
      body: JSON.stringify({
        path: model.path,
        type: 'notebook',
        name: model.name,
        kernel: { id: kernel.id, name: kernel.name }
      })
    },
    settings
  );
  if (!response.ok) {
    throw await ServerConnection.ResponseError.create(response);
  }
  await serviceManager.sessions.refreshRunning();
  await commands.execute('docmanager:open', {
    path: model.path,
    factory: 'Notebook'
  });
}

/** The log panel of the session, on the tab of `host`. */
export async function openLogs(
  ctx: IContext,
  session: ISession,
  host: string
): Promise<LogPanel> {
  const options: ILogOptions = {
    tail: ctx.settings().logTail,
    maxLines: ctx.settings().logMaxLines
  };
  let panel = ctx.logs.find(p => p.session.id === session.id);
  if (!panel) {
    panel = new LogPanel(ctx.model.client, session, options);
    void ctx.logs.add(panel);
    ctx.app.shell.add(panel, 'main', { mode: 'split-bottom' });
  } else if (hasEnded(session)) {
    panel.showKept(session); // opened while it ran
  }
  panel.select(host);
  ctx.app.shell.activateById(panel.id);
  return panel;
}

/** Terminate (or cancel) a session, after asking when `confirm`. */
export async function terminate(
  ctx: IContext,
  session: ISession,
  confirm: boolean
): Promise<boolean> {
  const trans = getTrans();
  if (confirm) {
    const result = await showDialog({
      title: trans.__('Terminate cluster session?'),
      body: trans._n(
        'Session %2 (%1 container) will be removed, with everything in it outside the data folders; its kernel shuts down.',
        'Session %2 (%1 containers) will be removed, with everything in them outside the data folders; its kernel shuts down.',
        session.containers.length,
        session.name
      ),
      buttons: [
        Dialog.cancelButton({ label: trans.__('Cancel') }),
        Dialog.warnButton({ label: trans.__('Terminate') })
      ]
    });
    if (!result.button.accept) {
      return false;
    }
  }
  const toast = new LiveNotification(
    trans.__('Terminating cluster session %1…', session.name),
    'in-progress',
    { autoClose: false }
  );
  try {
    await ctx.model.client.terminate(session.id);
    toast.update({
      message:
        session.status === 'PENDING'
          ? trans.__('Cluster session %1 cancelled', session.name)
          : trans.__('Cluster session %1 terminated', session.name),
      type: 'success',
      autoClose: 4000
    });
    return true;
  } catch (error) {
    toast.update({
      message: trans.__(
        'Could not terminate %1: %2',
        session.name,
        (error as Error).message
      ),
      type: 'error',
      autoClose: false
    });
    return false;
  }
}

/**
 * Terminals into a session's containers: one (`openTerminal`, the container
 * rows' terminal button and its command) or one per container as tabs in the
 * main area, main1 first (`openAllTerminals`, the session's "Terminals" button
 * and the `cluster:open-all-terminals` command). Each is a JupyterLab terminal
 * whose shell the server started in the container (`POST sessions/{id}/
 * containers/{host}/terminals`), titled `host · session`. Loaded with ./actions
 * when a command first runs.
 */

import { showErrorMessage } from '@jupyterlab/apputils';

import { IContainer, ISession, ITerminalModel } from './api';
import type { IContext } from './context';
import { getTrans } from './i18n';
import { USABLE } from './sessions';

/** The title of a terminal tab into `host` of session `sessionName`. */
export function terminalLabel(sessionName: string, host: string): string {
  return `${host} · ${sessionName}`;
}

/**
 * Orders hosts as a session numbers them: main1 first, then sub1, sub2, …,
 * sub10 (by number, not by text).
 */
export function compareHosts(a: string, b: string): number {
  const split = (host: string): [number, string, number] => {
    const [, prefix, digits] = /^(.*?)(\d*)$/.exec(host) ?? ['', host, ''];
    return [prefix === 'main' ? 0 : 1, prefix, digits ? Number(digits) : 0];
  };
  const [ra, pa, na] = split(a);
  const [rb, pb, nb] = split(b);
  return ra - rb || pa.localeCompare(pb) || na - nb || a.localeCompare(b);
}

/** Which containers of a session get a terminal, and which cannot (and why). */
export interface ITerminalPlan {
  /** Running containers, in host order. */
  hosts: string[];
  /** Containers that are not running, in host order, with their status. */
  skipped: { host: string; reason: string }[];
}

/**
 * The terminals to open in every container of `session`; an error (saying
 * why) when the session is not running or none of its containers is.
 */
export function planTerminals(session: ISession): ITerminalPlan {
  const trans = getTrans();
  if (!USABLE.has(session.status)) {
    throw new Error(
      trans.__(
        'Session %1 is %2, not running: there is no container to open a terminal in.',
        session.name,
        session.status
      )
    );
  }
  const containers = [...session.containers].sort((a, b) =>
    compareHosts(a.host, b.host)
  );
  const running = (c: IContainer) =>
    c.status === 'RUNNING' && Boolean(c.container_id);
  const plan: ITerminalPlan = {
    hosts: containers.filter(running).map(c => c.host),
    skipped: containers
      .filter(c => !running(c))
      .map(c => ({ host: c.host, reason: c.status_reason || c.status }))
  };
  if (!plan.hosts.length) {
    throw new Error(
      trans.__('No container of session %1 is running.', session.name)
    );
  }
  return plan;
}

/** What `openAllTerminals` did: tabs opened, and hosts without one (why). */
export interface ITerminalsOutcome {
  opened: string[];
  failed: { host: string; reason: string }[];
}

/**
 * What to tell the user after opening terminals in every container: null when
 * every container got one, else a title and a message naming the hosts that
 * got none and why.
 */
export function describeOutcome(
  sessionName: string,
  outcome: ITerminalsOutcome
): { title: string; message: string } | null {
  const trans = getTrans();
  if (!outcome.failed.length) {
    return null;
  }
  const why = outcome.failed.map(f => `${f.host}: ${f.reason}`).join('\n');
  if (!outcome.opened.length) {
    return {
      title: trans.__('Could not open terminals in %1', sessionName),
      message: trans.__('No terminal was opened.\n%1', why)
    };
  }
  return {
    title: trans.__('Some terminals of %1 could not be opened', sessionName),
    message: trans.__(
      'Opened in %1; none in %2.\n%3',
      outcome.opened.join(', '),
      outcome.failed.map(f => f.host).join(', '),
      why
    )
  };
}

/** A JupyterLab terminal whose shell runs as work in one container. */
export async function openTerminal(
  ctx: IContext,
  session: ISession,
  host: string
): Promise<void> {
  checkTerminals(ctx);
  const terminal = await ctx.model.client.openTerminal(session.id, host);
  await showTerminal(ctx, session, host, terminal);
}

/**
 * A terminal in every running container of the session, as tabs in the main
 * area, each after the previous (main1 first). The server starts the shells
 * concurrently; a container whose terminal fails gets none, and the user is
 * told which and why (a shell the server started but no tab shows is ended).
 * Throws (opening nothing) when the session is not running.
 */
export async function openAllTerminals(
  ctx: IContext,
  session: ISession
): Promise<ITerminalsOutcome> {
  checkTerminals(ctx);
  const client = ctx.model.client;
  const fresh = await client.getSession(session.id);
  const plan = planTerminals(fresh);
  const started = await Promise.all(
    plan.hosts.map(host =>
      client.openTerminal(fresh.id, host).then(
        (model): Started => ({ model }),
        (error): Started => ({ error: messageOf(error) })
      )
    )
  );
  const outcome: ITerminalsOutcome = { opened: [], failed: [...plan.skipped] };
  // One after the other: each tab goes after the one opened before it.
  for (const [i, host] of plan.hosts.entries()) {
    const { model, error } = started[i];
    if (!model) {
      outcome.failed.push({ host, reason: error ?? '' });
      continue;
    }
    try {
      await showTerminal(ctx, fresh, host, model);
      outcome.opened.push(host);
    } catch (error) {
      outcome.failed.push({ host, reason: messageOf(error) });
      await ctx.app.serviceManager.terminals
        .shutdown(model.name)
        .catch(() => undefined);
    }
  }
  outcome.failed.sort((a, b) => compareHosts(a.host, b.host));
  const problem = describeOutcome(fresh.name, outcome);
  if (problem) {
    void showErrorMessage(problem.title, problem.message);
  }
  return outcome;
}

/** A terminal the server started, or why it did not. */
type Started = { model?: ITerminalModel; error?: string };

function checkTerminals(ctx: IContext): void {
  if (!ctx.app.commands.hasCommand('terminal:open')) {
    throw new Error(
      getTrans().__('Terminals are not available on this server.')
    );
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Open the tab of a terminal the server started, titled after its container.
 * The terminal would rename itself ("Terminal 3", then whatever the shell sets,
 * e.g. "work@sub1: ~"): the title stays `host · session`.
 */
async function showTerminal(
  ctx: IContext,
  session: ISession,
  host: string,
  terminal: ITerminalModel
): Promise<void> {
  const trans = getTrans();
  // For a name it does not find running, JupyterLab's terminal:open asks the
  // server for a new terminal under it; the server refuses cluster terminals'
  // names (409), so a shell that ended at once (its container unreachable)
  // never comes back as a shell on the server's host.
  let widget: any;
  try {
    widget = await ctx.app.commands.execute('terminal:open', {
      name: terminal.name
    });
  } catch (error) {
    if ((error as any)?.response?.status === 409) {
      throw new Error(
        trans.__(
          'The shell in %1 ended as soon as it started (see the server log).',
          host
        )
      );
    }
    throw error;
  }
  if (!widget) {
    throw new Error(trans.__('JupyterLab opened no terminal tab.'));
  }
  const title = widget.content?.title;
  if (!title) {
    return;
  }
  const label = terminalLabel(session.name, host);
  title.caption = trans.__(
    'Terminal %1: %2 of cluster session %3',
    terminal.name,
    host,
    session.name
  );
  const pin = () => {
    if (title.label !== label) {
      title.label = label;
    }
  };
  pin();
  title.changed.connect(pin);
}

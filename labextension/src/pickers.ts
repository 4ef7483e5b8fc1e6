/**
 * How a command finds what it acts on: the session (or container) its args
 * name, else one the user picks from a list of those that fit; when none fits,
 * the user is told so. Used by ./commands.
 */

import { InputDialog, showErrorMessage } from '@jupyterlab/apputils';
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';

import { IContainer, ISession } from './api';
import type { IContext } from './context';
import { getTrans } from './i18n';

async function known(ctx: IContext, id: string): Promise<ISession> {
  return ctx.model.get(id) ?? (await ctx.model.client.getSession(id));
}

/** The session `args.sessionId`, or one the user picks among those that `ok`. */
export async function pickSession(
  ctx: IContext,
  args: ReadonlyPartialJSONObject,
  question: string,
  ok: (s: ISession) => boolean = () => true
): Promise<ISession | null> {
  const trans = getTrans();
  const id = args.sessionId as string | undefined;
  if (id) {
    return known(ctx, id);
  }
  return pick({
    choices: ctx.model.sessions,
    ok,
    label: s => `${s.name} (${s.status}, ${s.containers.length})`,
    question,
    empty: [
      trans.__('No cluster session'),
      trans.__('There is no cluster session for this. Launch one first.')
    ]
  });
}

/** The container `args.host` of `args.sessionId`, or one the user picks. */
export async function pickContainer(
  ctx: IContext,
  args: ReadonlyPartialJSONObject,
  question: string,
  ok: (s: ISession, host: string) => boolean = () => true
): Promise<{ session: ISession; host: string } | null> {
  const trans = getTrans();
  const id = args.sessionId as string | undefined;
  const host = args.host as string | undefined;
  if (id && host) {
    return { session: await known(ctx, id), host };
  }
  const choices: { session: ISession; container: IContainer }[] = [];
  for (const session of ctx.model.sessions) {
    if (!id || session.id === id) {
      choices.push(
        ...session.containers.map(container => ({ session, container }))
      );
    }
  }
  const picked = await pick({
    choices,
    ok: c => ok(c.session, c.container.host),
    label: ({ session, container: c }) =>
      `${session.name} / ${c.host} (${c.status})`,
    question,
    empty: [
      trans.__('No container'),
      trans.__('There is no running cluster container for this.')
    ]
  });
  return picked && { session: picked.session, host: picked.container.host };
}

/**
 * One of the `choices` that `ok`, which the user picks by its label; when
 * there is none, say so (`empty`: title and message) and give null.
 */
async function pick<T>(options: {
  choices: T[];
  ok: (choice: T) => boolean;
  label: (choice: T) => string;
  question: string;
  empty: [title: string, message: string];
}): Promise<T | null> {
  const choices = options.choices.filter(options.ok);
  if (!choices.length) {
    await showErrorMessage(...options.empty);
    return null;
  }
  const labels = choices.map(options.label);
  const result = await InputDialog.getItem({
    title: options.question,
    items: labels
  });
  if (!result.button.accept || result.value === null) {
    return null;
  }
  return choices[labels.indexOf(result.value)] ?? null;
}

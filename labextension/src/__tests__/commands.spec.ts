import { InputDialog, showErrorMessage } from '@jupyterlab/apputils';
import { CommandRegistry } from '@lumino/commands';

import * as actions from '../actions';
import { ClusterClient, ISession } from '../api';
import { addCommands, CommandIDs } from '../commands';
import { SessionsModel } from '../sessions';
import { readSettings } from '../settings';
import { session } from './fixtures';

jest.mock('@jupyterlab/apputils', () => ({
  ...jest.requireActual('@jupyterlab/apputils'),
  showErrorMessage: jest.fn(async () => undefined),
  InputDialog: { getItem: jest.fn() }
}));

jest.mock('../actions', () => ({
  launch: jest.fn(async () => null),
  openNotebook: jest.fn(async () => undefined),
  openLogs: jest.fn(async () => undefined),
  openTerminal: jest.fn(async () => undefined),
  openAllTerminals: jest.fn(async () => ({ opened: [], failed: [] })),
  terminate: jest.fn(async () => true)
}));

const mocked = actions as jest.Mocked<typeof actions>;
const getItem = InputDialog.getItem as jest.Mock;
const errorMessage = showErrorMessage as jest.Mock;

function running(overrides: Partial<ISession> = {}): ISession {
  const s = session({ status: 'RUNNING', kernel_state: 'running' });
  s.containers = s.containers.map(c => ({
    ...c,
    status: c.host === 'sub2' ? 'EXITED' : 'RUNNING'
  }));
  return { ...s, ...overrides };
}

describe('the commands on a session or container', () => {
  let commands: CommandRegistry;
  let model: SessionsModel;

  beforeEach(() => {
    jest.clearAllMocks();
    commands = new CommandRegistry();
    model = new SessionsModel({ client: {} as ClusterClient });
    addCommands({
      app: { commands } as any,
      model,
      settings: () => readSettings({ confirmTerminate: false }),
      showSidebar: jest.fn()
    });
  });

  afterEach(() => model.dispose());

  it('act on the session and host their args name', async () => {
    const s = running();
    model.upsert(s);
    await commands.execute(CommandIDs.openLogs, {
      sessionId: s.id,
      host: 'sub1'
    });
    await commands.execute(CommandIDs.terminate, { sessionId: s.id });
    expect(mocked.openLogs).toHaveBeenCalledWith(
      expect.objectContaining({ model }),
      s,
      'sub1'
    );
    expect(mocked.terminate).toHaveBeenCalledWith(expect.anything(), s, false);
    expect(getItem).not.toHaveBeenCalled();
  });

  it('ask which one among those that fit', async () => {
    const s = running();
    model.upsert(s);
    getItem.mockResolvedValue({
      button: { accept: true },
      value: 'e104916a / sub1 (RUNNING)'
    });
    await commands.execute(CommandIDs.openTerminal);
    expect(getItem).toHaveBeenCalledWith({
      title: 'Open a terminal in which container?',
      items: ['e104916a / main1 (RUNNING)', 'e104916a / sub1 (RUNNING)']
    });
    expect(mocked.openTerminal).toHaveBeenCalledWith(
      expect.anything(),
      s,
      'sub1'
    );

    getItem.mockResolvedValue({
      button: { accept: true },
      value: 'e104916a (RUNNING, 3)'
    });
    await commands.execute(CommandIDs.openNotebook);
    expect(mocked.openNotebook).toHaveBeenCalledWith(expect.anything(), s);
  });

  it('open terminals in every container of a running session', async () => {
    const s = running();
    model.upsert(s);
    model.upsert(running({ id: 'pending-1', status: 'PENDING' }));
    expect(commands.label(CommandIDs.openAllTerminals)).toBe(
      'Open terminals in every container'
    );
    await commands.execute(CommandIDs.openAllTerminals, { sessionId: s.id });
    expect(mocked.openAllTerminals).toHaveBeenCalledWith(
      expect.objectContaining({ model }),
      s
    );
    expect(getItem).not.toHaveBeenCalled();

    // From the palette: which session, among those that run.
    getItem.mockResolvedValue({
      button: { accept: true },
      value: 'e104916a (RUNNING, 3)'
    });
    await commands.execute(CommandIDs.openAllTerminals, { isPalette: true });
    expect(getItem).toHaveBeenCalledWith({
      title: 'Open terminals in every container of which session?',
      items: ['e104916a (RUNNING, 3)']
    });
    expect(mocked.openAllTerminals).toHaveBeenCalledTimes(2);

    const error = new Error('Session e104916a is TERMINATED, not running');
    mocked.openAllTerminals.mockRejectedValueOnce(error);
    await commands.execute(CommandIDs.openAllTerminals, { sessionId: s.id });
    expect(errorMessage).toHaveBeenCalledWith(
      'Could not open terminals',
      error
    );
  });

  it('do nothing when the question is cancelled', async () => {
    model.upsert(running());
    getItem.mockResolvedValue({ button: { accept: false }, value: null });
    await commands.execute(CommandIDs.openLogs);
    expect(mocked.openLogs).not.toHaveBeenCalled();
  });

  it('say so when there is nothing to act on', async () => {
    model.upsert(running({ kernel_state: 'waiting' }));
    await commands.execute(CommandIDs.openNotebook);
    expect(errorMessage).toHaveBeenCalledWith(
      'No cluster session',
      'There is no cluster session for this. Launch one first.'
    );
    expect(getItem).not.toHaveBeenCalled();
    expect(mocked.openNotebook).not.toHaveBeenCalled();
  });

  it('show why an action failed', async () => {
    const s = running();
    model.upsert(s);
    const error = new Error('no kernel');
    mocked.openNotebook.mockRejectedValueOnce(error);
    await commands.execute(CommandIDs.openNotebook, { sessionId: s.id });
    expect(errorMessage).toHaveBeenCalledWith(
      'Could not open a notebook',
      error
    );
  });

  it('have icons except in the palette', () => {
    expect(commands.icon(CommandIDs.refresh, {})).toBeTruthy();
    expect(commands.icon(CommandIDs.refresh, { isPalette: true })).toBe(
      undefined
    );
  });
});

/**
 * Usage accounting in Lab: the "Cluster usage" tab every user can open (the
 * command ./usagecommand registers) and the per-user table the admin panel's
 * usage section (./adminsections) shows too. Both read `GET usage`: a user
 * gets their own sessions, an admin everyone's (then the table has a user
 * column). The tab shows a small SVG chart of the latest sessions (allocated
 * CPU-hours, and the CPU time they measurably used, oldest on the left), then
 * the table per user, and is read again on Refresh and when it is shown.
 */

import { ReactWidget, refreshIcon } from '@jupyterlab/ui-components';
import { Message } from '@lumino/messaging';
import * as React from 'react';

import { ICaller, IUsageReport, IUsageTotals, whoAmI } from './adminapi';
import { ClusterClient } from './api';
import { IconButton } from './controls';
import { getTrans } from './i18n';

/** Sessions the chart shows at most (the newest). */
export const CHART_SESSIONS = 24;

const hours = (n: number) => n.toFixed(2);

/** Measured CPU time as a person reads it: seconds, minutes or hours. */
export function cpuTime(seconds: number | undefined): string {
  if (seconds === undefined || !Number.isFinite(seconds)) {
    return '–';
  }
  if (seconds < 60) {
    return `${seconds.toFixed(1)} s`;
  }
  if (seconds < 3600) {
    return `${(seconds / 60).toFixed(1)} min`;
  }
  return `${(seconds / 3600).toFixed(2)} h`;
}

/**
 * Totals per user: sessions, allocated hours (running, CPU, memory, GPU), the
 * CPU time measurably used, and a bar of allocated CPU-hours relative to the
 * largest; `showUser` false leaves out the user column (a user's own view).
 */
export function UsageTable(props: {
  users: (IUsageTotals & { user: string })[];
  showUser?: boolean;
}): JSX.Element {
  const trans = getTrans();
  const showUser = props.showUser ?? true;
  const most = Math.max(0, ...props.users.map(u => u.cpu_hours));
  return (
    <table className="jp-ClusterAdmin-table jp-ClusterUsage-table">
      <thead>
        <tr>
          {showUser && <th>{trans.__('User')}</th>}
          <th>{trans.__('Sessions')}</th>
          <th>{trans.__('Running h')}</th>
          <th>{trans.__('CPU h')}</th>
          <th>{trans.__('Memory GiB·h')}</th>
          <th>{trans.__('GPU h')}</th>
          <th title={trans.__('CPU time the containers measurably used')}>
            {trans.__('CPU used')}
          </th>
          <th />
        </tr>
      </thead>
      <tbody>
        {props.users.map(u => (
          <tr key={u.user} data-user={u.user}>
            {showUser && <td>{u.user || '-'}</td>}
            <td>{u.sessions}</td>
            <td>{hours(u.running_hours)}</td>
            <td>{hours(u.cpu_hours)}</td>
            <td>{hours(u.mem_gib_hours)}</td>
            <td>{hours(u.gpu_hours)}</td>
            <td className="jp-ClusterUsage-used">
              {cpuTime(u.cpu_seconds_used)}
            </td>
            <td className="jp-ClusterAdmin-barCell">
              <div
                className="jp-ClusterAdmin-bar"
                style={{ width: `${most ? (100 * u.cpu_hours) / most : 0}%` }}
              />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * The latest sessions (at most {@link CHART_SESSIONS}, oldest on the left) as
 * bars: the allocated CPU-hours, and inside, the CPU-hours measurably used,
 * both to the scale of the largest; each bar's title says its figures.
 */
export function UsageChart(props: {
  sessions: IUsageReport['sessions'];
}): JSX.Element | null {
  const trans = getTrans();
  const shown = [...props.sessions]
    .sort((a, b) => (a.created_at ?? 0) - (b.created_at ?? 0))
    .slice(-CHART_SESSIONS);
  if (!shown.length) {
    return null;
  }
  const used = (s: IUsageTotals) => (s.cpu_seconds_used ?? 0) / 3600;
  const top = Math.max(...shown.map(s => Math.max(s.cpu_hours, used(s))));
  const width = 12;
  const height = 60;
  const scale = (h: number) => (top > 0 ? (height * h) / top : 0);
  return (
    <svg
      className="jp-ClusterUsage-chart"
      role="img"
      aria-label={trans.__(
        'CPU-hours of your latest %1 sessions: allocated, and used',
        shown.length
      )}
      width={shown.length * width}
      height={height}
      viewBox={`0 0 ${shown.length * width} ${height}`}
    >
      {shown.map((s, i) => (
        <g key={s.id} data-session-id={s.id}>
          <title>
            {trans.__(
              '%1 (%2): %3 CPU-hours allocated, %4 used',
              s.name,
              s.owner || '-',
              hours(s.cpu_hours),
              cpuTime(s.cpu_seconds_used)
            )}
          </title>
          <rect
            className="jp-ClusterUsage-allocated"
            x={i * width + 1}
            y={height - scale(s.cpu_hours)}
            width={width - 2}
            height={scale(s.cpu_hours)}
          />
          <rect
            className="jp-ClusterUsage-usedBar"
            x={i * width + 3}
            y={height - scale(used(s))}
            width={width - 6}
            height={scale(used(s))}
          />
        </g>
      ))}
    </svg>
  );
}

/** The "Cluster usage" tab (a ReactWidget in the main area). */
export class ClusterUsagePanel extends ReactWidget {
  constructor(readonly client: Pick<ClusterClient, 'request'>) {
    super();
    this.id = 'jp-cluster-usage';
    this.addClass('jp-ClusterAdmin');
    this.addClass('jp-ClusterUsage');
    const trans = getTrans();
    this.title.label = trans.__('Cluster usage');
    this.title.caption = trans.__(
      'CPU-, memory- and GPU-hours your cluster sessions were allocated, and the CPU time they used'
    );
    this.title.closable = true;
  }

  /** The last `GET usage` (null until read). */
  report: IUsageReport | null = null;
  /** Who the caller is (null: not known; then no user column). */
  caller: ICaller | null = null;
  /** What failed in the last read, if anything. */
  error = '';

  /** Read who the caller is (once) and the usage again; render. */
  async refresh(): Promise<void> {
    try {
      if (this.caller === null) {
        this.caller = await whoAmI(this.client).catch(() => null);
      }
      this.report = await this.client.request<IUsageReport>(['usage']);
      this.error = '';
    } catch (error) {
      this.error = (error as Error).message;
    }
    this.update();
  }

  protected onAfterAttach(msg: Message): void {
    super.onAfterAttach(msg);
    void this.refresh();
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    void this.refresh();
  }

  protected render(): JSX.Element {
    const trans = getTrans();
    const admin = this.caller?.admin === true;
    const users = this.report?.users ?? [];
    return (
      <div className="jp-ClusterAdmin-body">
        <div className="jp-ClusterAdmin-toolbar">
          <h2>
            {admin
              ? trans.__("Everyone's usage (all time)")
              : trans.__('Your usage (all time)')}
          </h2>
          <IconButton
            icon={refreshIcon}
            className="jp-ClusterUsage-refresh"
            title={trans.__('Read the usage again')}
            label={trans.__('Refresh')}
            onClick={() => void this.refresh()}
          />
        </div>
        {this.error && <p className="jp-mod-error">{this.error}</p>}
        {this.report !== null && !users.length && !this.error && (
          <p className="jp-ClusterAdmin-empty">{trans.__('No usage yet.')}</p>
        )}
        {users.length > 0 && (
          <>
            <UsageChart sessions={this.report?.sessions ?? []} />
            <p className="jp-ClusterUsage-legend">
              <span className="jp-ClusterUsage-key jp-mod-allocated" />
              {trans.__('CPU-hours allocated')}{' '}
              <span className="jp-ClusterUsage-key jp-mod-used" />
              {trans.__('used (measured), latest sessions, oldest first')}
            </p>
            <UsageTable users={users} showUser={admin || users.length > 1} />
          </>
        )}
      </div>
    );
  }
}

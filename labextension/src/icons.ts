/**
 * The icon of cluster sessions: main1 above two sub containers, joined.
 * Drawn with the theme's icon colour class, so it follows light and dark themes.
 */

import { LabIcon } from '@jupyterlab/ui-components';

const CLUSTER_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">
  <g class="jp-icon3" fill="#616161">
    <rect x="8.5" y="2" width="7" height="6" rx="1.2"/>
    <rect x="1.5" y="16" width="7" height="6" rx="1.2"/>
    <rect x="15.5" y="16" width="7" height="6" rx="1.2"/>
    <path d="M11.2 8h1.6v3.2h6.8V16H18v-3.2H6V16H4.4v-4.8h6.8z"/>
  </g>
  <g class="jp-icon-brand0" fill="#1976D2">
    <circle cx="12" cy="5" r="1.3"/>
  </g>
</svg>`;

export const clusterIcon = new LabIcon({
  name: 'jupyter-cluster:cluster',
  svgstr: CLUSTER_SVG
});

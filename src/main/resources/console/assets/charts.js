// Charts by uPlot (the WebJar's, loaded by the page as a plain script): time series with a legend,
// and the numbers behind each chart in a table for people who do not see it.
import { h, table } from './dom.js';

const COLORS = ['#0b5cad', '#b3261e', '#1a6e35', '#7a4d00', '#6f42c1', '#0e7490', '#9d174d'];

/**
 * A figure with a line chart of series over time. times: epoch seconds; series: [{label,
 * values}]. The same numbers follow in a table (a chart alone is not accessible).
 */
export function timeChart(title, times, series,
  { width = 880, height = 240, bars = false, xLabel = null } = {}) {
  // xLabel: the x axis is a count (a training step...), not a time.
  const figure = h('figure', { class: 'chart' }, h('figcaption', {}, title));
  if (!times.length) {
    figure.append(h('p', { class: 'empty' }, 'No data in this range.'));
    return figure;
  }
  const canvas = h('div', { role: 'img', 'aria-label': `${title}: chart; the numbers are in the table below` });
  figure.append(canvas);
  if (window.uPlot) {
    const paths = bars && window.uPlot.paths.bars ? window.uPlot.paths.bars({ size: [0.6, 40] }) : undefined;
    const options = {
      width: Math.min(width, (document.getElementById('main')?.clientWidth || width) - 16),
      height,
      series: [{}, ...series.map((s, i) => ({
        label: s.label, stroke: COLORS[i % COLORS.length], width: 2,
        fill: bars ? `${COLORS[i % COLORS.length]}55` : undefined, paths,
      }))],
      axes: [xLabel ? { label: xLabel } : {}, { size: 60 }],
      scales: xLabel ? { x: { time: false } } : {},
    };
    // eslint-disable-next-line no-new, new-cap
    new window.uPlot(options, [times, ...series.map((s) => s.values)], canvas);
  }
  const details = h('details', {}, h('summary', {}, 'The numbers'),
    table(title, [xLabel || 'Time', ...series.map((s) => s.label)],
      times.map((t, i) => [xLabel ? String(t) : new Date(t * 1000).toLocaleString(),
        ...series.map((s) => String(s.values[i] ?? ''))])));
  figure.append(details);
  return figure;
}

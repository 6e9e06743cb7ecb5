// The cabinet's only script of its own: copy buttons and usage charts (uPlot). Loaded from
// 'self' under the CSP; it reads data from the markup and never evaluates strings.
(function () {
  'use strict';

  function css(name) {
    return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  }

  function initCopy(root) {
    root.querySelectorAll('button[data-copy]').forEach(function (button) {
      if (button.dataset.bound) return;
      button.dataset.bound = '1';
      button.addEventListener('click', function () {
        var text = button.getAttribute('data-copy');
        var done = function () {
          var label = button.textContent;
          button.textContent = 'Copied';
          button.setAttribute('data-copied', '');
          setTimeout(function () { button.textContent = label; button.removeAttribute('data-copied'); }, 1500);
        };
        if (navigator.clipboard && window.isSecureContext) {
          navigator.clipboard.writeText(text).then(done, function () { selectText(button); });
        } else {
          selectText(button);
        }
      });
    });
  }

  // Without the clipboard API (plain http off localhost), select the value so Ctrl+C works.
  function selectText(button) {
    var code = button.parentElement && button.parentElement.querySelector('.copy-value');
    if (!code) return;
    var range = document.createRange();
    range.selectNodeContents(code);
    var sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
  }

  function initCharts(root) {
    if (typeof uPlot === 'undefined') return;
    root.querySelectorAll('[data-chart]').forEach(function (figure) {
      if (figure.dataset.drawn) return;
      figure.dataset.drawn = '1';
      var d = JSON.parse(figure.getAttribute('data-chart'));
      var xs = d.dates.map(function (s) { return Date.parse(s + 'T00:00:00Z') / 1000; });
      var accent = css('--accent') || '#4f46e5';
      var muted = css('--muted') || '#667085';
      var grid = css('--border') || '#e4e7ec';
      var ok = css('--ok') || '#0f7b4b';
      var compact = function (u, vals) {
        return vals.map(function (v) {
          if (v == null) return '';
          if (Math.abs(v) >= 1e6) return +(v / 1e6).toFixed(1) + 'M';
          if (Math.abs(v) >= 1e3) return +(v / 1e3).toFixed(1) + 'k';
          return String(v);
        });
      };
      var axis = { stroke: muted, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
      var bars = uPlot.paths && uPlot.paths.bars ? uPlot.paths.bars({ size: [0.7, 48] }) : undefined;
      var opts = {
        width: Math.max(280, figure.clientWidth),
        height: 240,
        tzDate: function (ts) { return uPlot.tzDate(new Date(ts * 1e3), 'Etc/UTC'); },
        cursor: { points: { size: 6 } },
        scales: { x: { time: true }, req: { auto: true, range: function (u, min, max) { return [0, Math.max(1, max * 1.1)]; } },
          cr: { auto: true, range: function (u, min, max) { return [0, Math.max(1, max * 1.1)]; } } },
        axes: [
          Object.assign({}, axis, { values: [[86400, '{D} {MMM}', null, null, null, null, null, null, 1]] }),
          Object.assign({}, axis, { scale: 'req', size: 50, values: compact, label: 'requests', labelSize: 18 }),
          Object.assign({}, axis, { scale: 'cr', side: 1, grid: { show: false }, size: 50, values: compact, label: 'credits', labelSize: 18 }),
        ],
        series: [
          { value: '{YYYY}-{MM}-{DD}' },
          { label: 'Requests', scale: 'req', stroke: accent, fill: accent + '55', width: 1, paths: bars, points: { show: false } },
          { label: 'Credits', scale: 'cr', stroke: ok, width: 2, points: { show: xs.length <= 31 } },
        ],
      };
      var plot = new uPlot(opts, [xs, d.requests, d.credits], figure);
      if (window.ResizeObserver) {
        new ResizeObserver(function () { plot.setSize({ width: Math.max(280, figure.clientWidth), height: 240 }); }).observe(figure);
      }
    });
  }

  function init(root) {
    initCopy(root);
    initCharts(root);
  }

  document.addEventListener('DOMContentLoaded', function () { init(document); });
  // htmx swaps (period picker, deliveries list) bring new markup.
  document.addEventListener('htmx:load', function (e) { init(e.target || document); });
})();

// The cabinet's only script of its own: copy buttons, usage charts (uPlot) and the webhook form's estimate. Loaded from
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
      var sum = function (a) { return a.reduce(function (t, v) { return t + v; }, 0); };
      var day = function (ts) { return new Date(ts * 1e3).toISOString().slice(0, 10); };
      var countRange = function (u, min, max) { return [0, Math.max(1, Math.ceil(max * 1.1))]; };
      // Requests and credits are counts: ticks on whole numbers only (an empty chart reads 0 and 1, not 0.2).
      var counts = [];
      for (var p = 1; p <= 1e12; p *= 10) counts.push(p, 2 * p, 5 * p);
      // Bars stand on whole days: ticks a day apart or more (never a date twice), and half a day
      // of room at both ends so the first and last bars are whole.
      var days = [1, 2, 3, 7, 14, 28, 56].map(function (n) { return n * 86400; });
      var opts = {
        width: Math.max(280, figure.clientWidth),
        height: 240,
        tzDate: function (ts) { return uPlot.tzDate(new Date(ts * 1e3), 'Etc/UTC'); },
        cursor: { points: { size: 6 } },
        scales: {
          x: { time: true, range: function (u, min, max) { return [min - 43200, max + 43200]; } },
          req: { auto: true, range: countRange },
          cr: { auto: true, range: countRange },
        },
        axes: [
          Object.assign({}, axis, { incrs: days, values: [[86400, '{D} {MMM}', null, null, null, null, null, null, 1]] }),
          Object.assign({}, axis, { scale: 'req', size: 50, incrs: counts, values: compact, label: 'requests', labelSize: 18 }),
          Object.assign({}, axis, { scale: 'cr', side: 1, grid: { show: false }, size: 50, incrs: counts, values: compact, label: 'credits', labelSize: 18 }),
        ],
        // With nothing hovered the legend reads the period's totals, not "--".
        series: [
          { label: 'Day', value: function (u, v) { return v == null ? 'last ' + xs.length + ' days' : day(v); } },
          { label: 'Requests', scale: 'req', stroke: accent, fill: accent + '55', width: 1, paths: bars, points: { show: false },
            value: function (u, v) { return v == null ? sum(d.requests).toLocaleString('en-US') + ' in all' : v.toLocaleString('en-US'); } },
          { label: 'Credits', scale: 'cr', stroke: ok, width: 2, points: { show: xs.length <= 31 },
            value: function (u, v) { return v == null ? sum(d.credits).toLocaleString('en-US') + ' in all' : v.toLocaleString('en-US'); } },
        ],
      };
      var plot = new uPlot(opts, [xs, d.requests, d.credits], figure);
      if (window.ResizeObserver) {
        new ResizeObserver(function () { plot.setSize({ width: Math.max(280, figure.clientWidth), height: 240 }); }).observe(figure);
      }
    });
  }

  // The webhook form's estimate of what the Blocks box costs a day, as the box and the networks
  // change (the page states it for the saved settings; src/webhooks/cabinet.ts words it the same).
  function initBlockEstimate(root) {
    root.querySelectorAll('[data-block-estimate]').forEach(function (out) {
      var form = out.closest('form');
      var box = form && form.querySelector('input[name="block"]');
      var select = form && form.querySelector('select[name="block_networks"]');
      if (!box || !select || out.dataset.bound) return;
      out.dataset.bound = '1';
      var n = function (v) { return v.toLocaleString('en-US'); };
      var update = function () {
        if (!box.checked) { out.textContent = 'Blocks off: no credits for blocks.'; return; }
        var chosen = Array.prototype.filter.call(select.options, function (o) { return o.selected; });
        if (chosen.length === 0) chosen = Array.prototype.slice.call(select.options);
        var blocks = 0, credits = 0;
        chosen.forEach(function (o) { blocks += Number(o.dataset.blocks || 0); credits += Number(o.dataset.credits || 0); });
        out.textContent = 'Estimated: about ' + n(credits) + ' credits a day (' + n(blocks) + ' blocks a day on ' + chosen.length
          + ' network' + (chosen.length === 1 ? '' : 's') + ', each block billed).';
      };
      box.addEventListener('change', update);
      select.addEventListener('change', update);
    });
  }

  function init(root) {
    initCopy(root);
    initCharts(root);
    initBlockEstimate(root);
  }

  document.addEventListener('DOMContentLoaded', function () { init(document); });
  // htmx swaps (period picker, deliveries list) bring new markup.
  document.addEventListener('htmx:load', function (e) { init(e.target || document); });
})();

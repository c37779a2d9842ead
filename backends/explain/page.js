/* collc explain --html: the page's script (embedded in every page; it
 * fetches nothing). Reads the JSON the compiler wrote (ir/explain_html.c)
 * and draws the topology, the round's messages along their routes, each
 * link's load, the holdings grid and the metrics; a slider, buttons and
 * keys step the rounds, and the URL fragment #round=N names the round
 * shown (#tree=K also draws copy K of a symmetric schedule's trees). #round=N&dump also writes what the page drew for every round into
 * #dump (the browser tests read it). */
(function () {
  'use strict';
  var X = collcExplain; /* common.js */
  X.catchErrors();
  var D = JSON.parse(document.getElementById('data').textContent);
  var P = D.ranks, C = D.chunks, N = D.shown, FAULT = D.fault || null;
  var COPY = X.COPY, REDUCE = X.REDUCE, BAD = X.BAD;
  var el = X.el, sv = X.sv, bytes = X.bytes, usec = X.usec;
  function name(v) { return D.nodes[v][3]; }

  /* ---- the page's parts ---- */
  var body = document.body;
  el('h1', {}, body, 'collc explain: \'' + D.name + '\', ' + D.kind + ' on ' + D.topo);
  el('div', {id: 'sub'}, body, P + ' ranks, ' + C + ' chunks, ' + D.rounds + ' rounds (' +
     D.algorithm + '); link load: purple, darker and wider the busier; ' + bytes(D.bytes) + ' in all, ' + bytes(D.chunk_bytes) + ' a chunk' +
     (D.full ? '' : '; aggregated: too many ranks or chunks to show one by one, so links are' +
      ' drawn by their load (heat) and ranks by the share of their result they hold') +
     (FAULT ? '; WRONG: shown up to its fault in round ' + (FAULT.round + 1) : ''));
  var ctl = X.controls(body, N), slider = ctl.slider, label = ctl.label;
  var strip = el('div', {id: 'timeline', title: 'rounds: each bar the round\'s busiest link'},
                 body);
  var main = el('div', {id: 'main'}, body);
  var left = el('div', {id: 'left'}, main);
  var side = el('div', {id: 'side'}, main);
  var faultBox = FAULT ? el('div', {id: 'fault'}, side) : null;
  var roundBox = el('div', {id: 'roundinfo'}, side);
  var loadBox = el('div', {id: 'loads'}, side);
  var metricBox = el('div', {id: 'metrics'}, side);
  var treeBox = D.trees ? el('div', {id: 'treebox'}, side) : null;
  var hwrap = el('div', {id: 'holdings-wrap'}, body);
  var htitle = el('h2', {}, hwrap);
  var grid = el('div', {id: 'holdings'}, hwrap);
  el('div', {id: 'errors'}, body);
  var dump = el('pre', {id: 'dump'}, body);

  if (FAULT) {
    el('b', {}, faultBox, 'This schedule is wrong. ');
    el('span', {}, faultBox, 'collc stopped in round ' + (FAULT.round + 1) +
       (FAULT.msg >= 0 ? '; the send at fault is drawn in red' : '') +
       (FAULT.rank >= 0 ? ', and rank ' + FAULT.rank + '\'s chunk ' + FAULT.chunk +
        ' is outlined in red' : '') + '. The counterexample:');
    el('pre', {}, faultBox, FAULT.text);
  }

  /* ---- the topology ---- */
  var W = D.W, H = D.H, G = D.grid;
  var R = X.radius(G);
  var topo = sv('svg', {id: 'topo', viewBox: '0 0 ' + W + ' ' + H, width: W, height: H}, left);
  var defs = sv('defs', {}, topo);
  X.markers(defs, [['hr', REDUCE], ['hc', COPY], ['hb', BAD], ['ht', X.TREE]], '');
  var msgBox = el('div', {id: 'messages'}, left); /* under the drawing */
  var gLinks = sv('g', {id: 'links'}, topo);
  var gArrows = sv('g', {id: 'arrows'}, topo);
  var gTrees = sv('g', {id: 'trees'}, topo); /* above the arrows, which dim while it shows */
  var gNodes = sv('g', {id: 'nodes'}, topo);

  function linkPath(i, off, back) { return X.linkPath(D, i, off, back); }
  var pullBack = X.pullBack;

  var linkEl = D.links.map(function (L, i) {
    var e = sv('path', {d: linkPath(i, 1.5, 0), stroke: '#c8c8c8', 'stroke-width': 1,
                        fill: 'none', 'class': 'link'}, gLinks);
    var t = sv('title', {}, e);
    t.textContent = name(L[0]) + ' -> ' + name(L[1]) + (L.length > 2 ? ', around' : '');
    return e;
  });
  var switched = D.switched || []; /* optical circuits: shown in the rounds that use them */
  var nodeEl = D.nodes.map(function (n, v) {
    var g = sv('g', {}, gNodes);
    var sw = n[2] < 0;
    var shape = X.node(g, n, v, R);
    if (G >= 50 && !sw && n[3] !== String(n[2])) { /* the coordinates, when there is room */
      var ct = sv('text', {x: n[0] - R * 0.8, y: n[1] - R * 0.8 - 2, 'font-size': 9,
                           fill: '#555', 'text-anchor': 'end'}, g); /* between the links */
      ct.textContent = n[3];
    }
    X.nodeTitle(g, n);
    return shape;
  });

  /* ---- the rounds ---- */
  var want = D.want || [], st = null, stShown = -1;
  var cellEl = [];
  function buildGrid() {
    var cols = D.full ? C : Math.min(P, 32);
    grid.style.gridTemplateColumns = '48px repeat(' + cols + ', ' +
      (D.full && C > 64 ? 6 : 22) + 'px)';
    if (!D.full) {
      for (var r = 0; r < P; r++) {
        if (r % cols === 0) el('div', {'class': 'lab'}, grid, 'ranks ' + r);
        cellEl.push(el('div', {'class': 'cell', title: 'rank ' + r}, grid));
      }
      return;
    }
    el('div', {'class': 'lab'}, grid, 'chunk');
    for (var c = 0; c < C; c++) el('div', {'class': 'lab'}, grid, C > 64 && c % 8 ? '' : c);
    for (var r2 = 0; r2 < P; r2++) {
      el('div', {'class': 'lab'}, grid, 'rank ' + r2);
      for (var c2 = 0; c2 < C; c2++)
        cellEl.push(el('div', {'class': 'cell', 'data-r': r2, 'data-c': c2}, grid));
    }
  }
  buildGrid();

  function paintCell(i, v, changed) {
    var e = cellEl[i], n = v >> 1, fin = v & 1, w = want[i] > 0 ? want[i] : P;
    e.setAttribute('data-v', v);
    e.className = 'cell' + (fin ? ' fin' : '') + (changed ? ' chg' : '');
    if (!fin) e.style.background = n === 0 ? '#fff' : 'hsl(207, 70%, ' +
      (92 - 40 * Math.min(1, n / w)).toFixed(0) + '%)';
    else e.style.background = '';
    e.textContent = C <= 64 ? (n === 0 ? '-' : String(n)) : '';
    e.title = 'rank ' + ((i / C) | 0) + ', chunk ' + (i % C) + ': ' + n + ' of ' +
      (want[i] > 0 ? want[i] : '(any)') + ' contributions' + (fin ? ', final' : '');
  }
  function paintDensity(r, pct) {
    var e = cellEl[r];
    e.setAttribute('data-v', pct);
    e.className = 'cell' + (pct >= 100 ? ' fin' : '');
    e.style.background = pct >= 100 ? '' : 'hsl(207, 70%, ' + (92 - 0.4 * pct).toFixed(0) + '%)';
    e.title = 'rank ' + r + ': ' + pct + '% of its result';
    nodeEl[rankNode[r]].setAttribute('fill', pct >= 100 ? '#08306b' :
      'hsl(207, 70%, ' + (95 - 0.45 * pct).toFixed(0) + '%)');
  }
  var rankNode = [];
  D.nodes.forEach(function (n, v) { if (n[2] >= 0) rankNode[n[2]] = v; });

  /* The holdings after round k (0: the start) in st, from the nearest
   * state already computed. */
  function stateAt(k) {
    if (!D.full) return;
    if (st === null || k < stShown) {
      st = D.init.slice();
      stShown = 0;
    }
    for (; stShown < k; stShown++)
      D.steps[stShown].c.forEach(function (x) { st[x[0]] = x[1]; });
  }

  function drawArrows(k) {
    while (gArrows.firstChild) gArrows.removeChild(gArrows.firstChild);
    if (k === 0 || !D.full) return;
    var used = {};
    D.steps[k - 1].m.forEach(function (m, i) {
      var bad = FAULT && FAULT.mround === k - 1 && FAULT.msg === i;
      var d = X.routePath(D, m, used, R);
      var col = bad ? BAD : m[2] ? COPY : REDUCE;
      var p = sv('path', {d: d, stroke: col, 'stroke-width': bad ? 3.5 : 2, 'class': 'arrow',
                          'marker-end': 'url(#' + (bad ? 'hb' : m[2] ? 'hc' : 'hr') + ')',
                          'data-src': m[0], 'data-dst': m[1]}, gArrows);
      if (m[2]) p.setAttribute('stroke-dasharray', '6,3');
      var t = sv('title', {}, p);
      t.textContent = 'rank ' + m[0] + ' -> rank ' + m[1] + ': ' + (m[2] ? 'copy' : 'reduce') +
        ' chunk' + (m[3].indexOf(' ') >= 0 ? 's ' : ' ') + m[3] + (bad ? ' (the fault)' : '');
    });
  }

  /* who sends what to whom in round k, one line a message (the first
   * MSG_LINES; the rest counted), the fault's in red */
  var MSG_LINES = 64;
  function listMessages(k) {
    msgBox.textContent = '';
    if (k === 0 || !D.full) return;
    var ms = D.steps[k - 1].m;
    el('h2', {}, msgBox, 'Messages of round ' + k);
    var ol = el('ol', {id: 'msglist'}, msgBox);
    ms.slice(0, MSG_LINES).forEach(function (m, i) {
      var bad = FAULT && FAULT.mround === k - 1 && FAULT.msg === i;
      el('li', bad ? {'class': 'bad'} : {}, ol, 'rank ' + m[0] + ' \u2192 rank ' + m[1] + ': ' +
         (m[2] ? 'copy' : 'reduce') + ' chunk' + (m[3].indexOf(' ') >= 0 ? 's ' : ' ') + m[3] +
         ' (' + m[4].length + ' hop' + (m[4].length === 1 ? '' : 's') + ')' +
         (bad ? ': the fault' : ''));
    });
    if (ms.length > MSG_LINES)
      el('div', {'class': 'note'}, msgBox, 'and ' + (ms.length - MSG_LINES) + ' more');
  }

  function drawLoads(k) {
    var loads = [], top = 0;
    linkEl.forEach(function (e) {
      e.setAttribute('stroke', '#c8c8c8');
      e.setAttribute('stroke-width', 1);
    });
    switched.forEach(function (i) { linkEl[i].setAttribute('stroke', 'none'); });
    if (k > 0 && D.full)
      D.steps[k - 1].l.forEach(function (x) { loads.push(x); top = Math.max(top, x[1]); });
    if (k > 0 && !D.full) {
      var h = D.steps[k - 1].h;
      top = D.steps[k - 1].top;
      for (var i = 0; i < h.length; i++)
        if (h[i] !== '.') loads.push([i, (+h[i] + 1) / 10 * top]);
    }
    loads.forEach(function (x) {
      var share = top ? x[1] / top : 0, e = linkEl[x[0]];
      X.paintLoad(e, share);
      e.firstChild.textContent = name(D.links[x[0]][0]) + ' -> ' + name(D.links[x[0]][1]) +
        ': ' + (D.full ? bytes(x[1] * D.chunk_bytes) + ', ' : 'about ') +
        (100 * share).toFixed(0) + '% of the busiest';
    });
    loads.sort(function (a, b) { return b[1] - a[1] || a[0] - b[0]; });
    loadBox.textContent = '';
    if (k === 0) return;
    el('h2', {}, loadBox, 'Link loads in round ' + k + (D.full ? '' : ' (heat levels)'));
    var tb = el('table', {}, loadBox);
    var hr = el('tr', {}, tb);
    ['link', D.full ? 'bytes' : '', 'share of the busiest'].forEach(function (s) {
      el('th', {}, hr, s);
    });
    loads.slice(0, 8).forEach(function (x) {
      var tr = el('tr', {}, tb);
      el('td', {}, tr, name(D.links[x[0]][0]) + ' -> ' + name(D.links[x[0]][1]));
      el('td', {}, tr, D.full ? bytes(x[1] * D.chunk_bytes) : '');
      el('td', {}, tr, (100 * x[1] / top).toFixed(0) + '%');
    });
    if (loads.length > 8) el('div', {'class': 'note'}, loadBox, (loads.length - 8) +
                             ' more links carry data this round (hover a link for its load)');
  }

  function drawHoldings(k) {
    htitle.textContent = (D.full ? 'Holdings (ranks x chunks: contributions held; dark: final;' +
      ' orange: changed this round)' : 'Holdings (share of each rank\'s result held)') +
      (k === 0 ? ' at the start' : ' after round ' + k);
    if (!D.full) {
      var d = k === 0 ? null : D.steps[k - 1].d;
      for (var r = 0; r < P; r++) paintDensity(r, d ? d[r] : 0);
      return;
    }
    stateAt(k);
    var chg = {};
    if (k > 0) D.steps[k - 1].c.forEach(function (x) { chg[x[0]] = 1; });
    for (var i = 0; i < st.length; i++) paintCell(i, st[i], chg[i]);
    if (FAULT && FAULT.rank >= 0 && k === N) cellEl[FAULT.rank * C + FAULT.chunk].className += ' bad';
  }

  var bars = [];
  (function buildStrip() {
    var tops = D.steps.map(function (s) {
      return D.full ? s.l.reduce(function (a, x) { return Math.max(a, x[1]); }, 0) : s.top;
    });
    var most = Math.max.apply(null, tops.concat([1]));
    bars.push(el('div', {title: 'the start', style: 'height: 3px'}, strip));
    tops.forEach(function (t, i) {
      bars.push(el('div', {title: 'round ' + (i + 1) + ': busiest link ' +
                           (D.full ? bytes(t * D.chunk_bytes) : t + ' chunks'),
                           style: 'height: ' + (4 + 36 * t / most).toFixed(0) + 'px'}, strip));
    });
    bars.forEach(function (b, k) { b.addEventListener('click', function () { show(k); }); });
    if (FAULT) bars[N].className = 'bad';
  })();

  (function metrics() {
    var m = D.metrics;
    el('h2', {}, metricBox, 'Metrics');
    if (!m) {
      el('div', {'class': 'note'}, metricBox, 'none: the schedule is wrong');
      return;
    }
    var tb = el('table', {}, metricBox);
    [['rounds', m.rounds], ['messages', m.messages], ['volume', bytes(m.volume)],
     ['psi (volume / the least)', m.psi.toFixed(3)],
     ['theta (hops per byte sent)', m.theta.toFixed(3)],
     ['omega (busiest link / mean)', m.omega.toFixed(3)],
     ['model time at ' + bytes(D.bytes), usec(m.time)]].forEach(function (x) {
      var tr = el('tr', {}, tb);
      el('td', {}, tr, x[0]);
      el('td', {}, tr, String(x[1]));
    });
    if (m.symmetry) el('div', {'class': 'note'}, metricBox, 'measured on the base trees and ' +
                       'the group (by symmetry)');
  })();

  /* symmetric schedules: the base tree, then its copies under the group */
  var treeSel = null, treeShow = null;
  function drawTree() {
    while (gTrees.firstChild) gTrees.removeChild(gTrees.firstChild);
    var on = !!(treeShow && treeShow.checked);
    topo.setAttribute('class', on ? 'treeon' : '');
    if (!on) return;
    var T = D.trees, k = +treeSel.value, b = (k / T.copies) | 0, e = k % T.copies;
    var par = T.base[b], map = T.map[e];
    par.forEach(function (p, v) {
      if (p < 0) return;
      var a = D.nodes[map[v]], q = D.nodes[map[p]];
      var s = pullBack([a[0], a[1], q[0], q[1]], R + 2);
      sv('path', {d: 'M' + s[0] + ',' + s[1] + ' L' + s[2] + ',' + s[3], 'class': 'tree',
                  'marker-end': 'url(#ht)'}, gTrees);
    });
    treeLabel.textContent = k === 0 ? 'base tree 0' : 'base tree ' + b + ', copy by group ' +
      'element ' + e;
  }
  var treeLabel = null;
  if (treeBox) {
    el('h2', {}, treeBox, 'Trees');
    el('div', {'class': 'note'}, treeBox, D.trees.base.length + ' base tree(s); the group of ' +
       'order ' + D.trees.order + ' copies each, one chunk per copy' +
       (D.trees.copies < D.trees.order ? ' (the first ' + D.trees.copies + ' copies shown)' : ''));
    var lab = el('label', {}, treeBox);
    treeShow = el('input', {type: 'checkbox', id: 'treeshow'}, lab);
    lab.appendChild(document.createTextNode(' draw the tree (green: child to parent) '));
    treeSel = el('input', {type: 'range', id: 'treecopy', min: 0,
                           max: D.trees.base.length * D.trees.copies - 1, value: 0}, treeBox);
    treeLabel = el('div', {}, treeBox);
    treeShow.addEventListener('change', drawTree);
    treeSel.addEventListener('input', function () { treeShow.checked = true; drawTree(); });
  }

  var cur = -1;
  function show(k) {
    k = Math.max(0, Math.min(N, k | 0));
    cur = k;
    slider.value = k;
    var s = k > 0 ? D.steps[k - 1] : null;
    label.textContent = k === 0 ? 'the start' : 'round ' + k + ' of ' + D.rounds +
      (FAULT && k === N ? ': the fault' : '');
    roundBox.textContent = '';
    el('h2', {}, roundBox, k === 0 ? 'The start' : 'Round ' + k);
    el('div', {}, roundBox, k === 0 ? 'before any message' :
       (D.full ? s.m.length : s.n) + ' message(s)' + (D.full ? ' drawn along their routes ' +
       '(orange: reduce, blue dashed: copy)' : ' (too many to draw: links by load)'));
    listMessages(k);
    drawArrows(k);
    drawLoads(k);
    drawHoldings(k);
    bars.forEach(function (b, i) {
      b.className = (i === k ? 'cur' : '') + (FAULT && i === N ? ' bad' : '');
    });
    if (history.replaceState) {
      var keep = /dump/.test(location.hash) ? '&dump' : '';
      history.replaceState(null, '', '#round=' + k + keep);
    }
  }

  var fromHash = X.step(ctl, N, show, function () { return cur; }, FAULT ? N : 0);

  /* #dump: every round as the page drew it, read back from the page */
  function dumpAll() {
    var lines = [];
    for (var k = 0; k <= N; k++) {
      show(k);
      var v = cellEl.map(function (e) { return e.getAttribute('data-v'); });
      lines.push('round ' + k + ' arrows ' + gArrows.querySelectorAll('path.arrow').length +
                 ' cells ' + v.join(','));
    }
    dump.textContent = lines.join('\n') + '\n';
  }
  var tm = /tree=(\d+)/.exec(location.hash); /* #tree=K: copy K of the trees drawn */
  if (/dump/.test(location.hash)) dumpAll();
  show(fromHash());
  if (tm && treeSel) {
    treeSel.value = +tm[1];
    treeShow.checked = true;
    drawTree();
  }
  body.setAttribute('data-ms', performance.now().toFixed(0));
})();

/* collc explain --html: the page's script (embedded in every page; it
 * fetches nothing). Reads the JSON the compiler wrote (ir/explain_html.c)
 * and draws the topology, the round's messages along their routes, each
 * link's load, the holdings grid and the metrics; a slider, buttons and
 * keys step the rounds, and the URL fragment #round=N names the round
 * shown (#tree=K also draws copy K of a symmetric schedule's trees). #round=N&dump also writes what the page drew for every round into
 * #dump (the browser tests read it). */
(function () {
  'use strict';
  var errors = [];
  window.addEventListener('error', function (e) {
    errors.push(String(e.message));
    var box = document.getElementById('errors');
    if (box) box.textContent = errors.join('\n');
  });
  var D = JSON.parse(document.getElementById('data').textContent);
  var NS = 'http://www.w3.org/2000/svg';
  var P = D.ranks, C = D.chunks, N = D.shown, FAULT = D.fault || null;
  var COPY = '#0072b2', REDUCE = '#d55e00', BAD = '#cc0000';

  function el(tag, attrs, parent, text) {
    var e = document.createElement(tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function sv(tag, attrs, parent) {
    var e = document.createElementNS(NS, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function bytes(b) {
    var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], k = 0;
    while (b >= 1024 && k < 4) { b /= 1024; k++; }
    return (k === 0 || b === Math.floor(b) ? b.toFixed(0) : b.toFixed(2)) + ' ' + u[k];
  }
  function usec(s) { return (s * 1e6).toFixed(3) + ' us'; }
  function name(v) { return D.nodes[v][3]; }

  /* ---- the page's parts ---- */
  var body = document.body;
  el('h1', {}, body, 'collc explain: \'' + D.name + '\', ' + D.kind + ' on ' + D.topo);
  el('div', {id: 'sub'}, body, P + ' ranks, ' + C + ' chunks, ' + D.rounds + ' rounds (' +
     D.algorithm + '); link load: purple, darker and wider the busier; ' + bytes(D.bytes) + ' in all, ' + bytes(D.chunk_bytes) + ' a chunk' +
     (D.full ? '' : '; aggregated: too many ranks or chunks to show one by one, so links are' +
      ' drawn by their load (heat) and ranks by the share of their result they hold') +
     (FAULT ? '; WRONG: shown up to its fault in round ' + (FAULT.round + 1) : ''));
  var ctl = el('div', {id: 'controls'}, body);
  var bStart = el('button', {id: 'start', title: 'the start (Home)'}, ctl, '|<');
  var bPrev = el('button', {id: 'prev', title: 'the round before (left arrow)'}, ctl, '<');
  var bPlay = el('button', {id: 'play', title: 'play or pause (space)'}, ctl, 'play');
  var bNext = el('button', {id: 'next', title: 'the next round (right arrow)'}, ctl, '>');
  var bEnd = el('button', {id: 'end', title: 'the last round (End)'}, ctl, '>|');
  var slider = el('input', {id: 'slider', type: 'range', min: 0, max: N, value: 0}, ctl);
  var label = el('span', {id: 'roundlabel'}, ctl);
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
  var R = Math.max(5, Math.min(14, G * 0.3));
  var topo = sv('svg', {id: 'topo', viewBox: '0 0 ' + W + ' ' + H, width: W, height: H}, left);
  var defs = sv('defs', {}, topo);
  [['hr', REDUCE], ['hc', COPY], ['hb', BAD], ['ht', '#009e73']].forEach(function (m) {
    var mk = sv('marker', {id: m[0], viewBox: '0 0 10 10', refX: 8, refY: 5, markerWidth: 4,
                           markerHeight: 4, orient: 'auto'}, defs);
    sv('path', {d: 'M0,0 L10,5 L0,10 z', fill: m[1]}, mk);
  });
  var msgBox = el('div', {id: 'messages'}, left); /* under the drawing */
  var gLinks = sv('g', {id: 'links'}, topo);
  var gArrows = sv('g', {id: 'arrows'}, topo);
  var gTrees = sv('g', {id: 'trees'}, topo); /* above the arrows, which dim while it shows */
  var gNodes = sv('g', {id: 'nodes'}, topo);

  /* a hop u -> v shifted `off` to its right: [x1, y1, x2, y2] */
  function shifted(x1, y1, x2, y2, off) {
    var dx = x2 - x1, dy = y2 - y1, len = Math.sqrt(dx * dx + dy * dy) || 1;
    var ox = -dy / len * off, oy = dx / len * off;
    return [x1 + ox, y1 + oy, x2 + ox, y2 + oy];
  }
  /* The path of link i shifted off to its right, its end pulled back by
   * `back`; a wrap-around link is two stubs (out of the grid at its source,
   * back in at its destination). */
  function linkPath(i, off, back) {
    var L = D.links[i], a = D.nodes[L[0]], b = D.nodes[L[1]], s;
    if (L.length > 2) {
      var p = shifted(a[0], a[1], a[0] + L[2], a[1] + L[3], off);
      var q = shifted(b[0] - L[2], b[1] - L[3], b[0], b[1], off);
      q = pullBack(q, back);
      return 'M' + p[0].toFixed(1) + ',' + p[1].toFixed(1) + ' L' + p[2].toFixed(1) + ',' +
             p[3].toFixed(1) + ' M' + q[0].toFixed(1) + ',' + q[1].toFixed(1) + ' L' +
             q[2].toFixed(1) + ',' + q[3].toFixed(1);
    }
    s = pullBack(shifted(a[0], a[1], b[0], b[1], off), back);
    return 'M' + s[0].toFixed(1) + ',' + s[1].toFixed(1) + ' L' + s[2].toFixed(1) + ',' +
           s[3].toFixed(1);
  }
  function pullBack(s, back) {
    if (!back) return s;
    var dx = s[2] - s[0], dy = s[3] - s[1], len = Math.sqrt(dx * dx + dy * dy) || 1;
    var k = Math.max(0, len - back) / len;
    return [s[0], s[1], s[0] + dx * k, s[1] + dy * k];
  }

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
    var shape = sw ? sv('rect', {x: n[0] - R, y: n[1] - R * 0.7, width: 2 * R, height: 1.4 * R,
                                 fill: '#eee', stroke: '#777'}, g)
                   : sv('circle', {cx: n[0], cy: n[1], r: R, fill: '#fff', stroke: '#555'}, g);
    if (R >= 7) {
      var t = sv('text', {x: n[0], y: n[1] + 3.5, 'font-size': Math.min(10, R * 0.9),
                          'text-anchor': 'middle'}, g);
      t.textContent = sw ? 's' + v : String(n[2]);
    }
    if (G >= 50 && !sw && n[3] !== String(n[2])) { /* the coordinates, when there is room */
      var ct = sv('text', {x: n[0] - R * 0.8, y: n[1] - R * 0.8 - 2, 'font-size': 9,
                           fill: '#555', 'text-anchor': 'end'}, g); /* between the links */
      ct.textContent = n[3];
    }
    var tt = sv('title', {}, g);
    tt.textContent = (sw ? 'switch ' : 'rank ' + n[2] + ' at node ') + n[3];
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
      var d = '';
      m[4].forEach(function (l, h) {
        var n = used[l] = (used[l] || 0) + 1;
        d += (h ? ' ' : '') + linkPath(l, 3 + 4 * n, h === m[4].length - 1 ? R + 2 : 0);
      });
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
      e.setAttribute('stroke', 'hsl(280, 45%, ' + (88 - 33 * share).toFixed(0) + '%)');
      e.setAttribute('stroke-width', (1 + 4 * share).toFixed(1));
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

  var timer = null;
  function play() {
    if (timer) { clearInterval(timer); timer = null; bPlay.textContent = 'play'; return; }
    if (cur >= N) show(0);
    bPlay.textContent = 'pause';
    timer = setInterval(function () {
      if (cur >= N) { play(); return; }
      show(cur + 1);
    }, 800);
  }
  bStart.addEventListener('click', function () { show(0); });
  bPrev.addEventListener('click', function () { show(cur - 1); });
  bNext.addEventListener('click', function () { show(cur + 1); });
  bEnd.addEventListener('click', function () { show(N); });
  bPlay.addEventListener('click', play);
  slider.addEventListener('input', function () { show(+slider.value); });
  document.addEventListener('keydown', function (e) {
    if (e.target && e.target.tagName === 'INPUT' && e.target.type !== 'range') return;
    var k = {ArrowRight: cur + 1, ArrowLeft: cur - 1, Home: 0, End: N}[e.key];
    if (k !== undefined) { show(k); e.preventDefault(); }
    else if (e.key === ' ') { play(); e.preventDefault(); }
  });
  function fromHash() {
    var m = /round=(\d+)/.exec(location.hash);
    return m ? +m[1] : FAULT ? N : 0;
  }
  window.addEventListener('hashchange', function () {
    if (fromHash() !== cur) show(fromHash());
  });

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

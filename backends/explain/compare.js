/* collc explain --html with --collective A,B[,C]: the compare page's script
 * (embedded in the page; it fetches nothing). Reads the JSON the compiler
 * wrote (ir/explain_html.c, explain_html_compare): per schedule the object
 * the single page reads, all of one topology. One slider steps every
 * schedule in lockstep (a schedule past its last round shows its end); link
 * loads are coloured on one scale, the busiest link of any schedule in any
 * round the darkest, so a glance compares them; each column lists its
 * round's messages as the text form prints them. #round=N opens round N,
 * #tree=K draws copy K of the symmetric schedules' trees (above the arrows,
 * which dim), #round=N&dump writes every round as drawn into #dump (the
 * browser tests read it). Links, nodes, arrows and the round controls are
 * drawn by common.js, as on the single page. */
(function () {
  'use strict';
  var X = collcExplain; /* common.js */
  X.catchErrors();
  var ALL = JSON.parse(document.getElementById('data').textContent);
  var S = ALL.scheds, T0 = S[0];
  var COPY = X.COPY, REDUCE = X.REDUCE;
  var N = Math.max.apply(null, S.map(function (d) { return d.rounds; }));
  var MSG_LINES = 256;
  var el = X.el, sv = X.sv, bytes = X.bytes, usec = X.usec;
  function name(v) { return T0.nodes[v][3]; }
  /* "3 0 1 2 7" -> "0-3, 7", as the text form writes a message's chunks */
  function ranges(list) {
    var c = list.split(' ').map(Number).sort(function (a, b) { return a - b; }), out = [];
    for (var i = 0; i < c.length; i++) {
      var j = i;
      while (j + 1 < c.length && c[j + 1] <= c[j] + 1) j++;
      out.push(c[j] > c[i] ? c[i] + '-' + c[j] : String(c[i]));
      i = j;
    }
    return {text: out.join(', '), many: c.length > 1};
  }
  /* one message as the text form prints it */
  function msgText(m) {
    var r = ranges(m[3]), op = m[2] ? 'copy' : 'reduce';
    while (op.length < 6) op += ' ';
    return 'rank ' + m[0] + ' -> rank ' + m[1] + '  ' + op + ' chunk' + (r.many ? 's ' : ' ') +
      r.text + '  (' + m[4].length + ' hop' + (m[4].length === 1 ? '' : 's') + ')';
  }

  var W = T0.W, H = T0.H, R = X.radius(T0.grid);
  function linkPath(i, off, back) { return X.linkPath(T0, i, off, back); }

  /* ---- one scale for every schedule's loads: bytes on a link in a round ---- */
  var TOP = 1;
  S.forEach(function (d) {
    d.steps.forEach(function (s) {
      s.l.forEach(function (x) { TOP = Math.max(TOP, x[1] * d.chunk_bytes); });
    });
  });

  /* ---- the page ---- */
  var body = document.body;
  el('h1', {}, body, 'collc explain: ' + S.map(function (d) { return '\'' + d.name + '\''; })
     .join(', ') + ' side by side, ' + T0.kind + ' on ' + T0.topo);
  el('div', {id: 'sub'}, body, 'from ' + ALL.file + '; ' + bytes(T0.bytes) + ' a rank; ' +
     'link load: purple, darker and wider the busier, on one scale for every schedule (the ' +
     'darkest: ' + bytes(TOP) + ' on a link in a round); orange: reduce, blue dashed: copy');
  var ctl = X.controls(body, N), slider = ctl.slider, label = ctl.label;
  var row = el('div', {id: 'cmp'}, body);
  el('div', {id: 'errors'}, body);
  var dump = el('pre', {id: 'dump'}, body);

  var treeSel = null, treeShow = null;
  var cols = S.map(function (d, j) {
    var col = el('div', {'class': 'col', id: 'col' + j}, row), c = {d: d};
    el('h2', {}, col, '\'' + d.name + '\' (' + d.algorithm + ')');
    var m = d.metrics;
    el('div', {'class': 'note'}, col, d.chunks + ' chunks, ' + d.rounds + ' rounds, ' +
       m.messages + ' messages, volume ' + bytes(m.volume) + ', omega ' + m.omega.toFixed(3) +
       ', model time ' + usec(m.time) + ' at ' + bytes(d.bytes));
    /* the busiest link of each round, on the common scale */
    var strip = el('div', {'class': 'timeline', title: 'rounds: each bar the round\'s busiest ' +
                           'link, on the scale of every schedule'}, col);
    c.bars = [el('div', {title: 'the start', style: 'height: 3px'}, strip)];
    d.steps.forEach(function (s, i) {
      var t = s.l.reduce(function (a, x) { return Math.max(a, x[1]); }, 0) * d.chunk_bytes;
      c.bars.push(el('div', {title: 'round ' + (i + 1) + ': busiest link ' + bytes(t),
                             style: 'height: ' + (4 + 36 * t / TOP).toFixed(0) + 'px'}, strip));
    });
    for (var i = d.rounds + 1; i <= N; i++) /* rounds line up across the columns */
      c.bars.push(el('div', {'class': 'past', title: 'round ' + i + ': done'}, strip));
    c.bars.forEach(function (b, k) { b.addEventListener('click', function () { show(k); }); });
    var svg = sv('svg', {'class': 'topo', viewBox: '0 0 ' + W + ' ' + H}, col);
    var defs = sv('defs', {}, svg);
    X.markers(defs, [['hr', REDUCE], ['hc', COPY], ['ht', X.TREE]], j);
    c.svg = svg;
    var gLinks = sv('g', {}, svg);
    c.gArrows = sv('g', {'class': 'arrows'}, svg);
    c.gTrees = sv('g', {}, svg); /* above the arrows, which dim while it shows */
    var gNodes = sv('g', {}, svg);
    c.links = T0.links.map(function (L, i) {
      var e = sv('path', {d: linkPath(i, 1.5, 0), stroke: '#c8c8c8', 'stroke-width': 1,
                          fill: 'none'}, gLinks);
      sv('title', {}, e).textContent = name(L[0]) + ' -> ' + name(L[1]);
      return e;
    });
    T0.nodes.forEach(function (n, v) {
      var g = sv('g', {}, gNodes);
      X.node(g, n, v, R);
      X.nodeTitle(g, n);
    });
    c.status = el('div', {'class': 'status'}, col);
    c.list = el('ol', {'class': 'msglist'}, col);
    c.more = el('div', {'class': 'note'}, col);
    return c;
  });
  /* one tree control for every symmetric schedule on the page: copy K of each one's trees */
  var withTrees = cols.filter(function (c) { return c.d.trees; });
  var treeMax = Math.max.apply(null, [0].concat(withTrees.map(function (c) {
    return c.d.trees.base.length * c.d.trees.copies - 1;
  })));
  if (withTrees.length) {
    var tb = el('div', {id: 'treebox'}, ctl.bar);
    var lab = el('label', {}, tb);
    treeShow = el('input', {type: 'checkbox', id: 'treeshow'}, lab);
    lab.appendChild(document.createTextNode(' draw the trees (green: child to parent) of ' +
      withTrees.map(function (c) { return '\'' + c.d.name + '\''; }).join(', ') + ', copy '));
    treeSel = el('input', {type: 'range', id: 'treecopy', min: 0, max: treeMax, value: 0}, tb);
    treeShow.addEventListener('change', drawTrees);
    treeSel.addEventListener('input', function () { treeShow.checked = true; drawTrees(); });
  }
  function drawTrees() {
    var on = !!(treeShow && treeShow.checked);
    withTrees.forEach(function (c) {
      var g = c.gTrees, T = c.d.trees;
      while (g.firstChild) g.removeChild(g.firstChild);
      c.svg.setAttribute('class', 'topo' + (on ? ' treeon' : ''));
      if (!on) return;
      var k = Math.min(+treeSel.value, T.base.length * T.copies - 1);
      var b = (k / T.copies) | 0, e = k % T.copies, map = T.map[e];
      T.base[b].forEach(function (p, v) {
        if (p < 0) return;
        var a = T0.nodes[map[v]], q = T0.nodes[map[p]];
        sv('path', {d: X.seg(X.pullBack([a[0], a[1], q[0], q[1]], R + 2)), 'class': 'tree',
                    'marker-end': 'url(#ht' + cols.indexOf(c) + ')'}, g);
      });
    });
  }

  /* column c at round k: its round min(k, its rounds)'s arrows, loads, messages */
  function showCol(c, j, k) {
    var d = c.d, own = Math.min(k, d.rounds), s = own > 0 ? d.steps[own - 1] : null;
    var live = k > 0 && k <= d.rounds;
    while (c.gArrows.firstChild) c.gArrows.removeChild(c.gArrows.firstChild);
    c.links.forEach(function (e, i) {
      e.setAttribute('stroke', '#c8c8c8');
      e.setAttribute('stroke-width', 1);
      e.firstChild.textContent = name(T0.links[i][0]) + ' -> ' + name(T0.links[i][1]);
    });
    c.list.textContent = '';
    c.more.textContent = '';
    c.bars.forEach(function (b, i) {
      b.className = (i > d.rounds ? 'past' : '') + (i === k ? ' cur' : '');
    });
    if (!live) {
      c.status.textContent = k === 0 ? 'The start: before any message' :
        'Done after round ' + d.rounds + ' (of ' + N + ')';
      return;
    }
    c.status.textContent = 'Round ' + k + ': ' + s.m.length + ' message' +
      (s.m.length === 1 ? '' : 's');
    s.l.forEach(function (x) {
      var b = x[1] * d.chunk_bytes, share = b / TOP, e = c.links[x[0]];
      X.paintLoad(e, share);
      e.firstChild.textContent += ': ' + bytes(b) + ', ' + (100 * share).toFixed(0) +
        '% of the busiest of the page';
    });
    var used = {};
    s.m.forEach(function (m) {
      var a = sv('path', {d: X.routePath(T0, m, used, R), stroke: m[2] ? COPY : REDUCE, 'stroke-width': 2,
                          'class': 'arrow', 'marker-end': 'url(#' + (m[2] ? 'hc' : 'hr') + j +
                          ')'}, c.gArrows);
      if (m[2]) a.setAttribute('stroke-dasharray', '6,3');
      sv('title', {}, a).textContent = msgText(m);
    });
    s.m.slice(0, MSG_LINES).forEach(function (m) { el('li', {}, c.list, msgText(m)); });
    if (s.m.length > MSG_LINES) c.more.textContent = 'and ' + (s.m.length - MSG_LINES) + ' more';
  }

  var cur = -1;
  function show(k) {
    k = Math.max(0, Math.min(N, k | 0));
    cur = k;
    slider.value = k;
    label.textContent = k === 0 ? 'the start' : 'round ' + k + ' of ' + N;
    cols.forEach(function (c, j) { showCol(c, j, k); });
    if (history.replaceState) {
      var keep = (/tree=\d+/.exec(location.hash) || [''])[0];
      history.replaceState(null, '', '#round=' + k + (keep ? '&' + keep : '') +
                           (/dump/.test(location.hash) ? '&dump' : ''));
    }
  }

  var fromHash = X.step(ctl, N, show, function () { return cur; }, 0);

  /* #dump: every round as drawn, read back from the page: per column the
   * arrows and the message lines */
  function dumpAll() {
    var lines = [];
    for (var k = 0; k <= N; k++) {
      show(k);
      cols.forEach(function (c) {
        var li = c.list.querySelectorAll('li');
        lines.push('round ' + k + ' ' + c.d.name + ' arrows ' +
                   c.gArrows.querySelectorAll('path.arrow').length + ' lines ' + li.length);
        for (var i = 0; i < li.length; i++) lines.push('  ' + li[i].textContent);
      });
    }
    dump.textContent = lines.join('\n') + '\n';
  }
  if (/dump/.test(location.hash)) dumpAll();
  show(fromHash());
  var tm = /tree=(\d+)/.exec(location.hash);
  if (tm && treeSel) {
    treeSel.value = +tm[1];
    treeShow.checked = true;
    drawTrees();
  }
  body.setAttribute('data-ms', performance.now().toFixed(0));
})();

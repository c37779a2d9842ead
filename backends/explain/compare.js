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
 * browser tests read it). The geometry of a link (shifted, pulled back, a
 * wrap-around as two stubs) is page.js's. */
(function () {
  'use strict';
  var errors = [];
  window.addEventListener('error', function (e) {
    errors.push(String(e.message));
    var box = document.getElementById('errors');
    if (box) box.textContent = errors.join('\n');
  });
  var ALL = JSON.parse(document.getElementById('data').textContent);
  var S = ALL.scheds, T0 = S[0];
  var NS = 'http://www.w3.org/2000/svg';
  var COPY = '#0072b2', REDUCE = '#d55e00';
  var N = Math.max.apply(null, S.map(function (d) { return d.rounds; }));
  var MSG_LINES = 256;

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

  /* ---- geometry (page.js's) ---- */
  var W = T0.W, H = T0.H, G = T0.grid, R = Math.max(5, Math.min(14, G * 0.3));
  function shifted(x1, y1, x2, y2, off) {
    var dx = x2 - x1, dy = y2 - y1, len = Math.sqrt(dx * dx + dy * dy) || 1;
    var ox = -dy / len * off, oy = dx / len * off;
    return [x1 + ox, y1 + oy, x2 + ox, y2 + oy];
  }
  function pullBack(s, back) {
    if (!back) return s;
    var dx = s[2] - s[0], dy = s[3] - s[1], len = Math.sqrt(dx * dx + dy * dy) || 1;
    var k = Math.max(0, len - back) / len;
    return [s[0], s[1], s[0] + dx * k, s[1] + dy * k];
  }
  function seg(s) {
    return 'M' + s[0].toFixed(1) + ',' + s[1].toFixed(1) + ' L' + s[2].toFixed(1) + ',' +
      s[3].toFixed(1);
  }
  function linkPath(i, off, back) {
    var L = T0.links[i], a = T0.nodes[L[0]], b = T0.nodes[L[1]];
    if (L.length > 2)
      return seg(shifted(a[0], a[1], a[0] + L[2], a[1] + L[3], off)) + ' ' +
        seg(pullBack(shifted(b[0] - L[2], b[1] - L[3], b[0], b[1], off), back));
    return seg(pullBack(shifted(a[0], a[1], b[0], b[1], off), back));
  }

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
  var ctl = el('div', {id: 'controls'}, body);
  var bStart = el('button', {id: 'start', title: 'the start (Home)'}, ctl, '|<');
  var bPrev = el('button', {id: 'prev', title: 'the round before (left arrow)'}, ctl, '<');
  var bPlay = el('button', {id: 'play', title: 'play or pause (space)'}, ctl, 'play');
  var bNext = el('button', {id: 'next', title: 'the next round (right arrow)'}, ctl, '>');
  var bEnd = el('button', {id: 'end', title: 'the last round (End)'}, ctl, '>|');
  var slider = el('input', {id: 'slider', type: 'range', min: 0, max: N, value: 0}, ctl);
  var label = el('span', {id: 'roundlabel'}, ctl);
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
    [['hr', REDUCE], ['hc', COPY], ['ht', '#009e73']].forEach(function (mk) {
      var e = sv('marker', {id: mk[0] + j, viewBox: '0 0 10 10', refX: 8, refY: 5,
                            markerWidth: 4, markerHeight: 4, orient: 'auto'}, defs);
      sv('path', {d: 'M0,0 L10,5 L0,10 z', fill: mk[1]}, e);
    });
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
      var g = sv('g', {}, gNodes), sw = n[2] < 0;
      if (sw) sv('rect', {x: n[0] - R, y: n[1] - R * 0.7, width: 2 * R, height: 1.4 * R,
                          fill: '#eee', stroke: '#777'}, g);
      else sv('circle', {cx: n[0], cy: n[1], r: R, fill: '#fff', stroke: '#555'}, g);
      if (R >= 7) {
        var t = sv('text', {x: n[0], y: n[1] + 3.5, 'font-size': Math.min(10, R * 0.9),
                            'text-anchor': 'middle'}, g);
        t.textContent = sw ? 's' + v : String(n[2]);
      }
      sv('title', {}, g).textContent = (sw ? 'switch ' : 'rank ' + n[2] + ' at node ') + n[3];
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
    var tb = el('div', {id: 'treebox'}, ctl);
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
        sv('path', {d: seg(pullBack([a[0], a[1], q[0], q[1]], R + 2)), 'class': 'tree',
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
      e.setAttribute('stroke', 'hsl(280, 45%, ' + (88 - 33 * share).toFixed(0) + '%)');
      e.setAttribute('stroke-width', (1 + 4 * share).toFixed(1));
      e.firstChild.textContent += ': ' + bytes(b) + ', ' + (100 * share).toFixed(0) +
        '% of the busiest of the page';
    });
    var used = {};
    s.m.forEach(function (m) {
      var p = '';
      m[4].forEach(function (l, h) {
        var n = used[l] = (used[l] || 0) + 1;
        p += (h ? ' ' : '') + linkPath(l, 3 + 4 * n, h === m[4].length - 1 ? R + 2 : 0);
      });
      var a = sv('path', {d: p, stroke: m[2] ? COPY : REDUCE, 'stroke-width': 2,
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
    return m ? +m[1] : 0;
  }
  window.addEventListener('hashchange', function () {
    if (fromHash() !== cur) show(fromHash());
  });

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

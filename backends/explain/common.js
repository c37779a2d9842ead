/* collc explain --html: what both pages draw with (embedded before page.js
 * on the single page and before compare.js on the compare page; it fetches
 * nothing): DOM and SVG builders, byte and time text, a link's geometry
 * (shifted to its right, pulled back, a wrap-around as two stubs), node
 * markers, a message's arrow along its route, a load's colour, and the
 * round controls (buttons, slider, play, keys, #round=N). One copy, so the
 * two pages draw a link, a node and an arrow the same way. */
var collcExplain = (function () {
  'use strict';
  var NS = 'http://www.w3.org/2000/svg';
  var X = {COPY: '#0072b2', REDUCE: '#d55e00', BAD: '#cc0000', TREE: '#009e73'};

  /* script errors into #errors (the browser tests read it) */
  X.catchErrors = function () {
    var errors = [];
    window.addEventListener('error', function (e) {
      errors.push(String(e.message));
      var box = document.getElementById('errors');
      if (box) box.textContent = errors.join('\n');
    });
  };
  X.el = function (tag, attrs, parent, text) {
    var e = document.createElement(tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  };
  X.sv = function (tag, attrs, parent) {
    var e = document.createElementNS(NS, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  };
  X.bytes = function (b) {
    var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], k = 0;
    while (b >= 1024 && k < 4) { b /= 1024; k++; }
    return (k === 0 || b === Math.floor(b) ? b.toFixed(0) : b.toFixed(2)) + ' ' + u[k];
  };
  X.usec = function (s) { return (s * 1e6).toFixed(3) + ' us'; };
  /* a node's radius on a grid of pitch g */
  X.radius = function (g) { return Math.max(5, Math.min(14, g * 0.3)); };

  /* ---- geometry: D is a schedule's page data (nodes, links) ---- */
  /* a hop u -> v shifted `off` to its right: [x1, y1, x2, y2] */
  function shifted(x1, y1, x2, y2, off) {
    var dx = x2 - x1, dy = y2 - y1, len = Math.sqrt(dx * dx + dy * dy) || 1;
    var ox = -dy / len * off, oy = dx / len * off;
    return [x1 + ox, y1 + oy, x2 + ox, y2 + oy];
  }
  X.pullBack = function (s, back) {
    if (!back) return s;
    var dx = s[2] - s[0], dy = s[3] - s[1], len = Math.sqrt(dx * dx + dy * dy) || 1;
    var k = Math.max(0, len - back) / len;
    return [s[0], s[1], s[0] + dx * k, s[1] + dy * k];
  };
  X.seg = function (s) {
    return 'M' + s[0].toFixed(1) + ',' + s[1].toFixed(1) + ' L' + s[2].toFixed(1) + ',' +
      s[3].toFixed(1);
  };
  /* The path of link i of D shifted off to its right, its end pulled back
   * by `back`; a wrap-around link is two stubs (out of the grid at its
   * source, back in at its destination). */
  X.linkPath = function (D, i, off, back) {
    var L = D.links[i], a = D.nodes[L[0]], b = D.nodes[L[1]];
    if (L.length > 2)
      return X.seg(shifted(a[0], a[1], a[0] + L[2], a[1] + L[3], off)) + ' ' +
        X.seg(X.pullBack(shifted(b[0] - L[2], b[1] - L[3], b[0], b[1], off), back));
    return X.seg(X.pullBack(shifted(a[0], a[1], b[0], b[1], off), back));
  };
  /* message m's route (m[4], link ids) as one path, each hop beside those
   * the round drew on that link before (used counts them), its last hop
   * stopping short of the node of radius R */
  X.routePath = function (D, m, used, R) {
    var d = '';
    m[4].forEach(function (l, h) {
      var n = used[l] = (used[l] || 0) + 1;
      d += (h ? ' ' : '') + X.linkPath(D, l, 3 + 4 * n, h === m[4].length - 1 ? R + 2 : 0);
    });
    return d;
  };
  /* a link's colour and width at `share` of the busiest */
  X.paintLoad = function (e, share) {
    e.setAttribute('stroke', 'hsl(280, 45%, ' + (88 - 33 * share).toFixed(0) + '%)');
    e.setAttribute('stroke-width', (1 + 4 * share).toFixed(1));
  };
  /* the arrow heads, ids prefix + suffix, into defs */
  X.markers = function (defs, list, suffix) {
    list.forEach(function (m) {
      var mk = X.sv('marker', {id: m[0] + suffix, viewBox: '0 0 10 10', refX: 8, refY: 5,
                               markerWidth: 4, markerHeight: 4, orient: 'auto'}, defs);
      X.sv('path', {d: 'M0,0 L10,5 L0,10 z', fill: m[1]}, mk);
    });
  };
  /* node v (n = [x, y, rank or -1, name]) into g: a rank's circle or a
   * switch's box, its number when R leaves room, a tooltip; the shape */
  X.node = function (g, n, v, R) {
    var sw = n[2] < 0;
    var shape = sw ? X.sv('rect', {x: n[0] - R, y: n[1] - R * 0.7, width: 2 * R,
                                   height: 1.4 * R, fill: '#eee', stroke: '#777'}, g)
                   : X.sv('circle', {cx: n[0], cy: n[1], r: R, fill: '#fff', stroke: '#555'}, g);
    if (R >= 7) {
      var t = X.sv('text', {x: n[0], y: n[1] + 3.5, 'font-size': Math.min(10, R * 0.9),
                            'text-anchor': 'middle'}, g);
      t.textContent = sw ? 's' + v : String(n[2]);
    }
    return shape;
  };
  X.nodeTitle = function (g, n) {
    X.sv('title', {}, g).textContent = (n[2] < 0 ? 'switch ' : 'rank ' + n[2] + ' at node ') + n[3];
  };

  /* ---- the round controls ---- */
  /* The buttons, slider and label into parent; rounds 0..N. */
  X.controls = function (parent, N) {
    var c = {bar: X.el('div', {id: 'controls'}, parent)};
    c.start = X.el('button', {id: 'start', title: 'the start (Home)'}, c.bar, '|<');
    c.prev = X.el('button', {id: 'prev', title: 'the round before (left arrow)'}, c.bar, '<');
    c.play = X.el('button', {id: 'play', title: 'play or pause (space)'}, c.bar, 'play');
    c.next = X.el('button', {id: 'next', title: 'the next round (right arrow)'}, c.bar, '>');
    c.end = X.el('button', {id: 'end', title: 'the last round (End)'}, c.bar, '>|');
    c.slider = X.el('input', {id: 'slider', type: 'range', min: 0, max: N, value: 0}, c.bar);
    c.label = X.el('span', {id: 'roundlabel'}, c.bar);
    return c;
  };
  /* Binds the controls c to show(k) (cur() the round shown): buttons, the
   * slider, play every 800 ms, the arrow keys, Home, End and space, and
   * #round=N (else round `first`) on a hash change. Returns what reads
   * the round #round=N names, else first. */
  X.step = function (c, N, show, cur, first) {
    var timer = null;
    function play() {
      if (timer) { clearInterval(timer); timer = null; c.play.textContent = 'play'; return; }
      if (cur() >= N) show(0);
      c.play.textContent = 'pause';
      timer = setInterval(function () {
        if (cur() >= N) { play(); return; }
        show(cur() + 1);
      }, 800);
    }
    c.start.addEventListener('click', function () { show(0); });
    c.prev.addEventListener('click', function () { show(cur() - 1); });
    c.next.addEventListener('click', function () { show(cur() + 1); });
    c.end.addEventListener('click', function () { show(N); });
    c.play.addEventListener('click', play);
    c.slider.addEventListener('input', function () { show(+c.slider.value); });
    document.addEventListener('keydown', function (e) {
      if (e.target && e.target.tagName === 'INPUT' && e.target.type !== 'range') return;
      var k = {ArrowRight: cur() + 1, ArrowLeft: cur() - 1, Home: 0, End: N}[e.key];
      if (k !== undefined) { show(k); e.preventDefault(); }
      else if (e.key === ' ') { play(); e.preventDefault(); }
    });
    function fromHash() {
      var m = /round=(\d+)/.exec(location.hash);
      return m ? +m[1] : first;
    }
    window.addEventListener('hashchange', function () {
      if (fromHash() !== cur()) show(fromHash());
    });
    return fromHash;
  };
  return X;
})();

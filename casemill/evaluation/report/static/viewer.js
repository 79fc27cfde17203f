/* Casemill run viewer: the cases of one run or of several, filtered, each opening to its
   transcript, calls, checks, metrics and state diff. Plain script, no dependency, no network:
   the data is in the page (the index as JSON, the details gzip-compressed in base64, inflated
   by the browser the first time a case is opened). Case text is only ever set as text. */
(function () {
  "use strict";
  var index = JSON.parse(document.getElementById("cm-index").textContent);
  var runs = index.runs, cases = index.cases, many = runs.length > 1;
  var PAGE = 200, shown = PAGE, details = null, current = null;
  var filter = { q: "", status: "", op: "", intent: "", tag: "", kind: "", rule: "", flips: false };
  var root = document.getElementById("cm-viewer");

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function add(parent) {
    for (var i = 1; i < arguments.length; i++) if (arguments[i]) parent.appendChild(arguments[i]);
    return parent;
  }
  function uniq(values) {
    var seen = {};
    values.forEach(function (v) { seen[v] = (seen[v] || 0) + 1; });
    return Object.keys(seen).sort();
  }
  function all(fn) { var out = []; cases.forEach(function (c) { out = out.concat(fn(c)); }); return out; }
  function cellsOf(c) { return c.r.filter(function (x) { return x; }); }

  var choices = {
    status: ["pass", "fail", "flaky", "error", "not pass", "not covered"],
    op: uniq(all(function (c) { return [c.op]; })),
    intent: uniq(all(function (c) { return c.in; })),
    tag: uniq(all(function (c) { return c.tags; })),
    kind: uniq(all(function (c) { return all0(cellsOf(c), function (x) { return x.k; }); })),
    rule: index.rules
  };
  function all0(list, fn) { var out = []; list.forEach(function (x) { out = out.concat(fn(x)); }); return out; }

  function matches(c) {
    var cells = cellsOf(c);
    if (filter.q) {
      var hay = (c.id + " " + c.op + " " + c.in.join(" ") + " " + c.tags.join(" ") + " " +
        c.rules.join(" ")).toLowerCase();
      if (hay.indexOf(filter.q.toLowerCase()) < 0) return false;
    }
    if (filter.status) {
      var want = filter.status;
      if (!cells.some(function (x) { return want === "not pass" ? x.s !== "pass" && x.s !== "not covered" : x.s === want; })) return false;
    }
    if (filter.op && c.op !== filter.op) return false;
    if (filter.intent && c.in.indexOf(filter.intent) < 0) return false;
    if (filter.tag && c.tags.indexOf(filter.tag) < 0) return false;
    if (filter.kind && !cells.some(function (x) { return x.k.indexOf(filter.kind) >= 0; })) return false;
    if (filter.rule && c.rules.indexOf(filter.rule) < 0) return false;
    if (filter.flips && !c.flip) return false;
    return true;
  }

  function select(name, label) {
    var box = el("label", "cm-filter", label + " ");
    var sel = el("select");
    sel.name = name;
    sel.setAttribute("data-filter", name);
    add(sel, el("option", null, "any")).firstChild.value = "";
    choices[name].forEach(function (v) { var o = el("option", null, v); o.value = v; sel.appendChild(o); });
    sel.addEventListener("change", function () { filter[name] = sel.value; shown = PAGE; draw(); });
    return add(box, sel);
  }

  var bar = el("div", "cm-bar");
  var search = el("input");
  search.type = "search";
  search.placeholder = "search id, operator, intent, tag, rule";
  search.setAttribute("data-filter", "q");
  search.addEventListener("input", function () { filter.q = search.value.trim(); shown = PAGE; draw(); });
  add(bar, search, select("status", "status"), select("op", "operator"), select("intent", "intent"),
      select("tag", "tag"), select("kind", "error kind"), select("rule", "gate rule"));
  if (many) {
    var flipBox = el("label", "cm-filter", " flips only");
    var flip = el("input");
    flip.type = "checkbox";
    flip.setAttribute("data-filter", "flips");
    flip.addEventListener("change", function () { filter.flips = flip.checked; shown = PAGE; draw(); });
    flipBox.insertBefore(flip, flipBox.firstChild);
    add(bar, flipBox);
  }
  var count = el("p", "cm-count");
  var listBox = el("div", "cm-list");
  var panel = el("div", "cm-detail");
  panel.appendChild(el("p", "cm-note", "Select a case to see its transcript, calls, checks and state diff."));
  add(root, bar, count, add(el("div", "cm-panes"), listBox, panel));

  function statusCell(x) {
    if (!x) return el("td", "cm-st cm-none", "-");
    var td = el("td", "cm-st cm-" + x.s.replace(" ", "-"), x.s + (x.t > 1 ? " " + x.p + "/" + x.t : ""));
    if (x.k.length) td.title = x.k.join(", ");
    return td;
  }

  function draw() {
    var found = cases.filter(matches);
    count.textContent = found.length + " of " + cases.length + " cases" +
      (found.length > shown ? " (first " + shown + " listed)" : "");
    var table = el("table", "cm-cases");
    var head = add(el("tr"), el("th", null, "case"), el("th", null, "operator"), el("th", null, "intent"));
    runs.forEach(function (r, i) { var th = el("th", null, many ? "run " + (i + 1) : "status"); th.title = r.name; head.appendChild(th); });
    head.appendChild(el("th", "cm-rules", "rules failed"));
    table.appendChild(add(el("thead"), head));
    var body = el("tbody");
    found.slice(0, shown).forEach(function (c) {
      var tr = add(el("tr", c.flip ? "cm-flip" : null), el("td", "cm-id", c.id), el("td", null, c.op),
                   el("td", null, c.in.join(", ")));
      c.r.forEach(function (x) { tr.appendChild(statusCell(x)); });
      var rules = el("td", "cm-rules num", c.rules.length || "");
      rules.title = c.rules.join("\n");
      tr.appendChild(rules);
      tr.setAttribute("data-case", c.id);
      if (current === c.id) tr.className += " cm-open";
      tr.addEventListener("click", function () { location.hash = "case=" + encodeURIComponent(c.id); });
      body.appendChild(tr);
    });
    table.appendChild(body);
    listBox.textContent = "";
    listBox.appendChild(table);
    if (found.length > shown) {
      var more = el("button", "cm-more", "show " + Math.min(PAGE, found.length - shown) + " more");
      more.addEventListener("click", function () { shown += PAGE; draw(); });
      listBox.appendChild(more);
    }
  }

  function inflate() {
    if (!details) {
      var text = document.getElementById("cm-details").textContent.trim();
      var raw = atob(text), bytes = new Uint8Array(raw.length);
      for (var i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
      var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
      details = new Response(stream).text().then(JSON.parse);
    }
    return details;
  }

  var where = "";  /* " (run 2, trial 0)" in a comparison: each section says whose it is */
  function section(title) { var s = el("section", "cm-sec"); s.appendChild(el("h4", null, title + where)); return s; }
  function pre(text, cls) { return el("pre", cls, text); }
  function list(items, empty) {
    if (!items.length) return el("p", "cm-note", empty);
    var ul = el("ul");
    items.forEach(function (t) { ul.appendChild(el("li", null, t)); });
    return ul;
  }

  function message(m) {
    var box = el("div", "cm-msg cm-role-" + String(m.role).replace(/[^a-z]/gi, ""));
    var head = add(el("div", "cm-msg-head"), el("span", "cm-role", m.role));
    if (m.simulated) head.appendChild(el("span", "cm-badge cm-sim", "simulated"));
    if (m.tool_call_id) head.appendChild(el("span", "cm-note", " answers " + m.tool_call_id));
    box.appendChild(head);
    if (m.content && m.role === "system" && m.content.length > 300) {
      // a long system prompt (an agent's policy) folded: its first line, open on a click
      var fold = el("details", "cm-fold");
      fold.appendChild(el("summary", "cm-note", m.content.split("\n")[0].slice(0, 120) +
        " (" + m.content.length + " characters)"));
      fold.appendChild(pre(m.content));
      box.appendChild(fold);
    } else if (m.content) box.appendChild(pre(m.content));
    (m.tool_calls || []).forEach(function (c) { box.appendChild(pre("-> " + c, "cm-call")); });
    if (m.extra) box.appendChild(pre(m.extra, "cm-note"));
    return box;
  }

  function transcript(caseDetail, t) {
    var s = section("Transcript");
    var msgs = t.messages.length ? t.messages : (caseDetail.conversation || []);
    msgs.forEach(function (m) { s.appendChild(message(m)); });
    if (!t.messages.length) {
      t.calls.forEach(function (c) { s.appendChild(message({ role: "agent tool call", content: c })); });
      if (t.reply) s.appendChild(message({ role: "agent reply", content: t.reply }));
    }
    if (!msgs.length && !t.calls.length) s.appendChild(el("p", "cm-note", "no message recorded"));
    return s;
  }

  function calls(caseDetail, t) {
    var s = section("Expected against actual calls");
    var table = add(el("table"), add(el("tr"), el("th", null, "expected"), el("th", null, "actual")));
    var left = el("td"), right = el("td");
    (caseDetail.expected || []).concat(caseDetail.forbidden || []).forEach(function (c) { left.appendChild(pre(c)); });
    if (!left.firstChild) left.appendChild(el("span", "cm-note", "no call"));
    t.calls.forEach(function (c) { right.appendChild(pre(c)); });
    if (!right.firstChild) right.appendChild(el("span", "cm-note", "no call"));
    table.appendChild(add(el("tr"), left, right));
    return add(s, table);
  }

  function phrases(caseDetail, t) {
    var s = section("Reply and phrases");
    s.appendChild(pre(t.reply || "(no reply)", "cm-reply"));
    var reply = (t.reply || "").toLowerCase();
    (caseDetail.contains || []).forEach(function (p) {
      var ok = reply.indexOf(p.toLowerCase()) >= 0;
      s.appendChild(el("div", ok ? "cm-pass" : "cm-fail", (ok ? "+ has " : "- lacks ") + JSON.stringify(p)));
    });
    (caseDetail.excludes || []).forEach(function (p) {
      var ok = reply.indexOf(p.toLowerCase()) < 0;
      s.appendChild(el("div", ok ? "cm-pass" : "cm-fail", (ok ? "+ avoids " : "- says ") + JSON.stringify(p)));
    });
    return s;
  }

  function diff(t) {
    var s = section("State diff (expected against final)");
    if (!t.diff.length) return add(s, el("p", "cm-note", t.diffNote));
    var table = add(el("table", "cm-diff"), add(el("tr"), el("th", null, "path"), el("th", null, "- expected"), el("th", null, "+ final")));
    t.diff.forEach(function (d) {
      table.appendChild(add(el("tr"), el("td", null, d[0]), add(el("td", "cm-minus"), pre("- " + d[1])),
                            add(el("td", "cm-plus"), pre("+ " + d[2]))));
    });
    return add(s, table);
  }

  function metrics(t) {
    var s = section("Metrics and checks");
    var table = el("table", "cm-metrics");
    Object.keys(t.metrics).forEach(function (k) {
      var v = t.metrics[k];
      table.appendChild(add(el("tr"), el("td", null, k), el("td", "num", typeof v === "number" ? +v.toFixed(4) : v)));
    });
    s.appendChild(table);
    var checks = el("p");
    Object.keys(t.checks).forEach(function (k) { add(checks, el("span", t.checks[k] ? "cm-pass" : "cm-fail", (t.checks[k] ? "+" : "-") + k + " ")); });
    s.appendChild(checks);
    t.violations.forEach(function (v) { s.appendChild(el("p", "cm-fail", "violation: " + v)); });
    t.notes.forEach(function (v) { s.appendChild(el("p", "cm-note", v)); });
    return s;
  }

  function trial(caseDetail, t, label) {
    where = label ? " (" + label + "trial " + t.trial + ")" : "";
    var box = el("details", "cm-trial");
    box.open = true;
    var verdict = t.ok ? "pass" : (t.failure || "fail");
    add(box, add(el("summary"), el("span", null, label + "trial " + t.trial + ": "), el("span", t.ok ? "cm-pass" : "cm-fail", verdict)));
    if (t.error) box.appendChild(el("p", "cm-fail", "error (" + t.kind + "): " + t.error));
    add(box, transcript(caseDetail, t), calls(caseDetail, t), phrases(caseDetail, t), diff(t), metrics(t));
    return box;
  }

  function showCase(id) {
    var c = cases.filter(function (x) { return x.id === id; })[0];
    if (!c) return;
    current = id;
    var at = cases.indexOf(c);
    panel.textContent = "";
    panel.appendChild(el("p", "cm-note", "loading..."));
    inflate().then(function (all) {
      if (current !== id) return;
      var d = all[at], caseDetail = d.case;
      panel.textContent = "";
      add(panel, el("h3", "cm-id", c.id), el("p", "cm-note", "operator " + c.op + " / intent " + c.in.join(", ") +
          " / " + c.tags.join(", ") + (c.rules.length ? " / failed gate rules: " + c.rules.join("; ") : "")));
      if (caseDetail.missing) panel.appendChild(el("p", "cm-note", "the case record is not at hand: only its scores are shown"));
      else add(panel, el("p", null, "expected outcome: " + caseDetail.outcome + (caseDetail.operators.length ? "; made by " + caseDetail.operators.join(" > ") : "")));
      d.runs.forEach(function (trials, i) {
        if (many) {
          var h = el("h3", "cm-run", "run " + (i + 1) + ": " + runs[i].name + " (" + runs[i].agent + ")");
          panel.appendChild(h);
          if (!trials.length) panel.appendChild(el("p", "cm-note", "not in this run"));
        }
        trials.forEach(function (t) { panel.appendChild(trial(caseDetail, t, many ? "run " + (i + 1) + ", " : "")); });
        where = "";
      });
      draw();
    });
  }

  function fromHash() {
    var h = decodeURIComponent(location.hash.replace(/^#/, ""));
    if (h.indexOf("case=") === 0) showCase(h.slice(5));
    if (h.indexOf("rule=") === 0) {
      filter.rule = h.slice(5);
      var sel = bar.querySelector("select[name=rule]");
      if (sel) sel.value = filter.rule;
      shown = PAGE;
      draw();
      root.scrollIntoView();
    }
  }
  window.addEventListener("hashchange", fromHash);
  draw();
  fromHash();
  document.documentElement.setAttribute("data-viewer", "ready");
})();

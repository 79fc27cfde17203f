// Casemill review: keyboard shortcuts and small conveniences. Served as a file so that the
// Content-Security-Policy can forbid inline scripts.
(function () {
  "use strict";
  const page = document.body.dataset.page;
  const $ = (sel) => document.querySelector(sel);

  function typing(target) {
    const tag = (target.tagName || "").toLowerCase();
    return tag === "input" || tag === "textarea" || tag === "select" || target.isContentEditable;
  }
  function go(link) { if (link) { window.location.href = link.getAttribute("href"); } }
  function submit(form) { if (form) { form.requestSubmit ? form.requestSubmit() : form.submit(); } }

  // Bulk buttons ask before acting on many cases.
  document.querySelectorAll("button[data-confirm]").forEach((btn) => {
    btn.addEventListener("click", (ev) => {
      if (btn.value === "reject" && !$("#bulk-reason").value.trim()) {
        ev.preventDefault(); $("#bulk-reason").focus(); return;
      }
      if (!window.confirm(btn.dataset.confirm)) { ev.preventDefault(); }
    });
  });

  // A filter applies as soon as it is chosen: the table, the counts and the bulk buttons
  // (disabled until a filter is applied) follow it without a separate Filter click.
  document.querySelectorAll("#filters select").forEach((sel) => {
    sel.addEventListener("change", () => submit($("#filters")));
  });

  // Queue rows open on click; j/k move a cursor, Enter opens.
  let cursor = -1;
  const rows = Array.from(document.querySelectorAll("#queue tbody tr"));
  rows.forEach((row) => row.addEventListener("click", (ev) => {
    if (ev.target.tagName.toLowerCase() !== "a") { window.location.href = row.dataset.href; }
  }));
  function moveCursor(step) {
    if (!rows.length) { return; }
    if (cursor >= 0) { rows[cursor].classList.remove("cursor"); }
    cursor = Math.max(0, Math.min(rows.length - 1, cursor + step));
    rows[cursor].classList.add("cursor");
    rows[cursor].scrollIntoView({ block: "nearest" });
  }

  const reason = $("#reject-reason");
  if (reason) {
    reason.addEventListener("keydown", (ev) => {
      if (ev.key === "Escape") { reason.value = ""; reason.blur(); document.body.classList.remove("rejecting"); }
    });
  }
  const callsForm = $("#calls-form");
  if (callsForm) {
    callsForm.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); submit(callsForm); }
      if (ev.key === "Escape") { document.activeElement.blur(); }
    });
  }

  document.addEventListener("keydown", (ev) => {
    if (ev.ctrlKey || ev.metaKey || ev.altKey || typing(ev.target)) { return; }
    const key = ev.key;
    if (key === "?") { const h = $("#help"); h.hidden = !h.hidden; return; }
    if (page === "queue") {
      if (key === "j") { moveCursor(1); }
      else if (key === "k") { moveCursor(-1); }
      else if (key === "Enter" && cursor >= 0) { window.location.href = rows[cursor].dataset.href; }
      else if (key === "n") { go($("#start")); }
      return;
    }
    if (page !== "case") { return; }
    if (key === "a") { const b = $("#approve"); if (b && !b.disabled) { ev.preventDefault(); submit($("#approve-form")); } }
    else if (key === "r" && reason) { ev.preventDefault(); document.body.classList.add("rejecting"); reason.focus(); }
    else if (key === "u") { submit($("#undo-form") || $("#undo-last-form")); }
    else if (key === "e") {
      const box = $("#edit-calls"); if (box) { box.open = true; }
      const t = $("#params_0") || $("#params_new"); if (t) { ev.preventDefault(); t.focus(); }
    }
    else if (key === "j" || key === "n") { go($("#next")); }
    else if (key === "k" || key === "p") { go($("#prev")); }
    else if (key === "g") { go($("#to-queue")); }
    else if (key === "d") { const d = $("#fulldiff"); if (d) { d.open = !d.open; if (d.open) { d.scrollIntoView(); } } }
  });
})();

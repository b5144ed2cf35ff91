// Duckflow web page: the essay tools (SmartAO). Paste an essay, run style / check / eval; eval
// streams its progress over SSE ("criterion 2 of 5 — about 40 s left") and can be stopped.
// Signed in by the page's cookie (sent by the browser; a request that changes something adds
// X-Duckflow-Page); nothing here touches the conversation.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  let abort = null;

  function say(text, cls) {
    const p = document.createElement("p");
    p.textContent = text;
    if (cls) p.className = cls;
    $("essay-out").appendChild(p);
  }

  function show(task, report) {
    const out = $("essay-out");
    out.textContent = "";
    const ev = report.evaluation;
    if (ev) {
      say(`total ${ev.total}/100` + (ev.judged < ev.criteria ? ` (${ev.judged} of ${ev.criteria} criteria judged)` : ""));
      for (const s of ev.scores) {
        say(s.level === null ? `${s.criterion}: ${s.reason}` : `${s.criterion}: ${s.level}/${s.max} — ${s.reason}`);
        if (s.to_next) say(`→ ${s.to_next}`, "muted");
      }
    }
    for (const i of (report.style || {}).issues || []) say(`line ${i.line}, col ${i.col}: ${i.message}`);
    const p = report.plagiarism;
    if (p) {
      say(`plagiarism: ${p.score.toFixed(2)} → ${p.verdict}`);
      for (const m of p.matches) for (const ps of m.passages || []) say(`line ${ps.line}: ${ps.text}`, "muted");
    }
    if (report.new_text) { say("the essay after the fixes:"); const pre = document.createElement("pre"); pre.textContent = report.new_text; out.appendChild(pre); }
    if (!out.childElementCount) say(`${task}: nothing to report`);
  }

  async function run(task) {
    const text = $("essay-text").value.trim();
    if (!text) { $("essay-out").textContent = "Paste an essay first."; return; }
    const body = { text };
    const refs = $("essay-refs").value.trim();
    if (refs) body.refs = [{ name: "reference", text: refs }];
    if (task === "check" && !refs) { $("essay-out").textContent = "Paste a reference text to check against."; return; }
    if (abort) abort.abort();
    abort = new AbortController();
    $("essay-stop").hidden = false;
    $("essay-status").textContent = "working…";
    try {
      const r = await fetch("/v1/essays/" + task, { method: "POST", signal: abort.signal, body: JSON.stringify(body),
        headers: { "X-Duckflow-Page": "1", "Content-Type": "application/json", Accept: "text/event-stream" } });
      if (!r.ok) { const d = await r.json().catch(() => ({})); throw new Error(d.detail || r.statusText); }
      const reader = r.body.getReader();
      const dec = new TextDecoder();
      let buf = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += dec.decode(value, { stream: true });
        let cut;
        while ((cut = buf.indexOf("\n\n")) >= 0) {
          const frame = buf.slice(0, cut); buf = buf.slice(cut + 2);
          const data = frame.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
          if (!data) continue;
          const chunk = JSON.parse(data);
          if (chunk.type === "progress") $("essay-status").textContent = chunk.data.what;
          else if (chunk.type === "warning") say(chunk.data.message, "muted");
          else if (chunk.type === "error") throw new Error(chunk.data.message + (chunk.data.hint ? ` (next: ${chunk.data.hint})` : ""));
          else if (chunk.type === "done") show(task, JSON.parse(chunk.data.text));
        }
      }
      $("essay-status").textContent = "";
    } catch (err) {
      $("essay-status").textContent = err.name === "AbortError" ? "stopped" : String(err.message || err);
    } finally {
      abort = null;
      $("essay-stop").hidden = true;
    }
  }

  document.addEventListener("DOMContentLoaded", () => {
    if (!$("essay")) return;
    $("essay-toggle").addEventListener("click", () => { $("essay").hidden = !$("essay").hidden; });
    for (const task of ["style", "check", "eval"]) $("essay-" + task).addEventListener("click", () => run(task));
    $("essay-stop").addEventListener("click", () => { if (abort) abort.abort(); });
  });
})();

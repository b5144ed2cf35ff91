// What a person reads on the web page: the chunk stream turned into a conversation — prose in
// bubbles, one collapsed row per action, the approval card inline at the end, a timeline of events,
// and the raw trace (every chunk, as before) behind the "Details" switch. Every text from the
// server goes in with textContent: model output is never HTML (replies are markdown, drawn by md.js
// as DOM nodes). The chat's own commands (/undo, /status …) show as the person's words and a plain
// answer; every change made has Undo on its row: back to before it through the undo stack (the later
// changes with it, asked first), Redo once undone — the buttons follow the checkpoints (GET /v1/undo).
"use strict";

const Talk = (() => {
  // notices a person needs to read; the rest (route, vitals, codec, raw replies...) stay in the trace
  const CHAT_NOTICES = new Set(["queued", "paused", "constraint", "auto_approved", "approval_refused",
    "approval_stale", "overwrite", "copied_example", "router", "images", "question", "delegated"]);
  const ENDINGS = { done: "Done", approval: "Waiting for your approval", input: "Waiting for your answer",
    error: "Stopped on an error", paused: "Paused", stopped: "Stopped", cancelled: "Cancelled by you" };
  const CHANGES = new Set(["write_file", "edit_file", "delete_path", "move_path", "create_directory", "apply_patch"]);

  const { el, clip, clock, parse, actionLabel, resultNote, approvalHeadline, cleanReply, diffBlock, fields } = Words;  // words.js
  // a DML macro's head and end (as tolerant as the server's reader): shown as "Writing FILE:" and "$ COMMAND"
  const DML_HEAD = /^\s*\u{1F986}[ \t]?\u25B6[\uFE0E\uFE0F]?[ \t]?\[\s*T\s*[:\uFF1A]\s*(\w+)\s*\|(.*)$/u;
  const DML_END = /\][ \t]?\u25C0[\uFE0E\uFE0F]?[ \t]?\u{1F986}/u;
  const tidy = (line) => {
    const m = line.match(DML_HEAD);
    if (!m) return line.replace(DML_END, "");
    const rest = m[2].split(DML_END)[0];
    if (/^(execute_shell|run_tests|run_command|shell)$/.test(m[1])) return "$ " + rest.trim();
    const bar = rest.indexOf("|");
    return bar < 0 ? line : `Writing ${rest.slice(0, bar).trim()}:\n${rest.slice(bar + 1)}`;
  };

  class Conversation {
    constructor(log, timeline, hooks) {
      Object.assign(this, { log, timeline, hooks, bubble: null, streamed: false, echo: [], rows: new Map(),
        cards: new Map(), diffs: new Map(), painting: new Set(), changes: new Map(), stack: new Map(), turnBubbles: [] });
      this.typing = el("div", "typing", "Working…"); this.typing.hidden = true; log.appendChild(this.typing);
      this.writing = el("pre", "writing"); this.writing.hidden = true; this.tail = ""; log.appendChild(this.writing);
    }

    add(node) {  // every visible item goes before the "working" line; prose after it starts a new bubble
      const stick = this.hooks.nearBottom();
      const open = this.asking && this.asking.isConnected && node.classList.contains("bot") && !node.classList.contains("cmd");
      this.log.insertBefore(node, open ? this.asking : this.typing);  // the model's words before its question
      if (!node.classList.contains("trace") && !node.classList.contains("bot")) this.bubble = null;
      this.hooks.added(stick);
      return node;
    }

    working(on) {  // "Working… 12 s" from a turn's start to its end (a local model can take minutes)
      if (on && this.since) return;
      if (this.hooks.busy) this.hooks.busy(on);
      clearInterval(this.ticker); this.typing.hidden = !on; this.since = on ? Date.now() : 0;
      if (!on) this.write("");
      this.typing.textContent = "Working…";
      if (on) this.ticker = setInterval(() => {
        if (!this.typing.isConnected) return clearInterval(this.ticker);
        const s = Math.round((Date.now() - this.since) / 1000);
        if (s >= 2) this.typing.textContent = `Working… ${s} s`;
      }, 1000);
    }

    event(time, text, kind) {
      const li = el("li", kind || "");
      li.append(el("time", "", clock(time)), el("span", "", text));
      this.timeline.appendChild(li);
    }

    trace(c) {
      const d = c.data || {};
      const what = c.type === "delta" ? JSON.stringify(d.text) : JSON.stringify(d).slice(0, 240);
      this.add(el("div", "trace", `${c.seq} ${clock(c.time)} ${c.agent || ""} ${c.type} ${what}`));
    }

    mine(text, note) {  // the person's own words, shown at once (the server's echo is then skipped)
      this.add(el("div", "msg user" + (note ? " note" : ""), text));
      this.echo.push(text);
    }

    prose(text, agent) {  // markdown, redrawn from the whole text as it streams (a few times a second)
      if (!this.bubble || this.bubble.dataset.agent !== agent) {
        this.bubble = this.add(el("div", "msg bot md"));
        this.bubble.dataset.agent = agent; this.bubble.raw = "";
        this.turnBubbles.push(this.bubble);
      }
      this.bubble.raw += text;
      const b = this.bubble;
      if (!this.painting.has(b)) { this.painting.add(b); setTimeout(() => this.paint(b), 40); }
    }

    paint(b) {
      if (!this.painting.delete(b)) return;
      const stick = this.hooks.nearBottom();
      b.replaceChildren(Md.render(b.raw));
      if (b.stopped) b.appendChild(el("span", "stopped", "(cancelled)"));
      this.hooks.added(stick);
    }

    write(text) {  // the last lines a model writes in its protocol (a file's lines, a command), live
      this.tail = text.slice(-4000);
      const lines = this.tail.split("\n").map(tidy).join("\n").split("\n").filter((l) => l.trim()).slice(-6);
      this.writing.hidden = !lines.length || !this.since;
      this.writing.textContent = lines.join("\n");
      if (lines.length) this.hooks.added(this.hooks.nearBottom());
    }

    forming(d) {  // a native call as it forms: its file's text or its command (decoded by the server)
      if (!this.calls) this.calls = new Map();
      if (!this.calls.has(d.id)) this.calls.set(d.id, { path: "", begun: false });
      const call = this.calls.get(d.id);
      if (d.key === "path") { call.path += d.text || ""; return; }
      if (!d.text || (d.key !== "content" && d.key !== "command")) return;
      const head = call.begun ? "" : d.key === "command" ? "\n$ " : `\nWriting ${call.path || "a file"}:\n`;
      call.begun = true;
      this.write(this.tail + head + d.text);
    }

    flush() { [...this.painting].forEach((b) => this.paint(b)); }

    command(c, d) {  // the person's /word (shown at once when typed here), then the answer below it
      const text = (d.details && d.details.text) || d.message;
      this.event(c.time, `You typed ${clip(text, 40)}`, "start");
      if (this.echo[0] === text) this.echo.shift(); else this.add(el("div", "msg user", text));
      this.pending = d.details || {};
    }

    answer(text) {
      const d = this.pending || {}; this.pending = null;
      const box = this.add(el("div", "msg bot cmd" + (d.ok === false ? " refused" : "")));
      if (d.diff) box.appendChild(diffBlock(text)); else box.appendChild(el("pre", "answer", text));
      if ((d.word === "undo" || d.word === "redo") && this.hooks.refreshUndo) this.hooks.refreshUndo();  // the rows follow the checkpoints
    }

    offerUndo(row, cp) {  // every change made: Undo on its row (what it does is read from the stack)
      if (!cp || row.querySelector(".undo")) return;
      row.dataset.checkpoint = String(cp); this.changes.set(cp, row);
      const b = el("button", "undo", "Undo"); b.type = "button"; b.title = `take it back (/undo #${cp})`;  // (just made)
      b.onclick = (e) => { e.preventDefault(); e.stopPropagation(); this.undoClick(row, cp); };
      row.querySelector("summary").appendChild(b);
      if (this.hooks.refreshUndo) this.hooks.refreshUndo();
    }

    undoStates(list) {  // GET /v1/undo: each row's button says what is true now
      this.stack = new Map(list.map((c) => [c.id, c]));
      for (const [cp, row] of this.changes) {
        const c = this.stack.get(cp), b = row.querySelector(".undo");
        row.classList.toggle("undone", !!(c && c.undone));
        if (!b) continue;
        b.hidden = !c || (c.undone && !c.redoable);  // gone from the store, or undone for good: no button
        b.disabled = false;
        b.textContent = c && c.undone ? "Redo" : "Undo";
        b.title = !c ? "" : c.undone ? `bring it back (/redo #${cp})` : `take it back (/undo #${cp})`;
        const note = row.querySelector(".undone-note");
        if (c && c.undone && !c.redoable && !note) row.querySelector("summary").appendChild(el("span", "undone-note", "undone"));
        if (note && !(c && c.undone && !c.redoable)) note.remove();
      }
    }

    undoClick(row, cp) {  // one change: at once; more (the later ones go with it): asked first, in words
      const c = this.stack.get(cp);
      if (!c) return;
      const redo = c.undone, others = redo ? c.redo_with : c.undo_with;
      const word = redo ? "/redo" : "/undo";
      const old = row.nextElementSibling;
      if (old && old.classList.contains("confirm-undo")) old.remove();
      if (!others.length) { row.querySelector(".undo").disabled = true; this.hooks.command(`${word} #${cp}`); return; }
      const files = [...new Set([cp, ...others].flatMap((i) => (this.stack.get(i) || {}).paths || []))];
      const n = others.length, one = n === 1, them = one ? "1 other change" : `${n} other changes`;
      const what = files.join(", "), many = files.length > 1;
      const text = redo
        ? `Redo this change? The ${them} undone after it ${one ? "comes" : "come"} back first (a redo goes in the reverse order of the undos), so ${what} ${many ? "are" : "is"} as these changes left ${many ? "them" : "it"}. /undo #${cp} takes all ${n + 1} back again.`
        : `Undo this change? The ${them} made after it ${one ? "goes" : "go"} too (${one ? "it was" : "they were"} made on top of it): ${what} ${many ? "go" : "goes"} back to how ${many ? "they were" : "it was"} before this change. /redo #${cp} brings all ${n + 1} back.`;
      const box = el("div", "confirm-undo");
      const yes = el("button", "approve", `${redo ? "Redo" : "Undo"} ${n + 1} changes`), no = el("button", "", "Keep as it is");
      yes.type = no.type = "button";
      yes.onclick = () => { box.remove(); row.querySelector(".undo").disabled = true; this.hooks.command(`${word} #${cp}`); };
      no.onclick = () => box.remove();
      const buttons = el("div", "buttons"); buttons.append(yes, no);
      box.append(el("p", "", text), buttons);
      this.log.insertBefore(box, row.nextSibling);
      this.hooks.attention(box);
    }

    stopped() {  // Stop: the reply written so far stays, marked "(cancelled)"
      const b = this.turnBubbles[this.turnBubbles.length - 1];
      if (b) { b.stopped = true; b.classList.add("cancelled"); this.painting.add(b); this.paint(b); }
    }

    line(text, cls) { this.add(el("div", "line " + (cls || ""), text)); }

    show(c) {
      this.trace(c);
      const d = c.data || {}, agent = c.agent || "";
      switch (c.type) {
        case "notice": return this.notice(c, d);
        case "delta":
          if (/\.specialized$/.test(agent)) { if (d.text) this.write(this.tail + d.text); return; }  // shown while written
          if (!d.text) return;
          this.prose(d.text, agent); this.streamed = true; return;
        case "reply": {
          if (agent === "command") { this.answer(d.text); return; }
          const text = this.streamed ? "" : cleanReply(d.text);
          this.streamed = false; this.bubble = null;
          if (text) { this.prose(text, agent); this.bubble = null; }
          return;
        }
        case "decision":  // a single-call step's thought is the model's prose; two-call reasons stay in the trace
          if (d.pattern === "single_call" && d.rationale && !/^\(no thought/.test(d.rationale)) { this.prose(d.rationale, "thought"); this.bubble = null; }
          return;
        case "tool_call_delta": if (this.since) this.forming(d); return;  // shown while written
        case "tool_call": return this.action(c, d);
        case "tool_response": return this.result(c, d);
        case "approval": return d.phase === "answer" ? this.answered(c, d) : this.approval(c, d);
        case "progress":
          if (d.phase === "start") { this.working(true); if (/^asking /.test(d.what || "")) { this.write(""); this.calls = null; } }
          return;
        case "error":
          this.line(`Something went wrong: ${d.message}${d.hint ? " — " + d.hint : ""}`, "error"); this.errored = true;
          this.event(c.time, "Error: " + clip(d.message, 60), "bad"); return;
        case "warning": this.line("⚠ " + d.message, "warn"); return;
        case "done":
          this.flush(); this.working(false); this.bubble = null; this.streamed = false; this.turnBubbles = [];
          if (d.ending === "error" && d.text && !this.errored) this.line(d.text, "error");
          if (d.ending === "approval" && this.again) this.line("An approval is still waiting: answer it first, then send your message again.", "warn");
          this.again = false;
          this.errored = false;
          this.event(c.time, ENDINGS[d.ending] || "Turn ended", d.ending === "error" ? "bad" : d.ending === "done" ? "end done" : "end");
          this.hooks.done(d);
      }
    }

    notice(c, d) {
      if (d.code === "route") {
        const text = d.details && d.details.text;
        this.event(c.time, text ? `You asked: “${clip(text, 40)}”` : "Turn started", "start");
        if (text && this.echo[0] === text) this.echo.shift();
        else if (text) this.add(el("div", "msg user", text));
        if (d.details && d.details.declaration) this.line(d.details.declaration);  // the route changed
        this.working(true);
        return;
      }
      if (d.code === "command") { this.command(c, d); return; }
      if (d.code === "turn_end") { this.line(d.message, "muted turn-end"); return; }  // time, tokens, tokens/s
      if (d.code === "question" && d.details && d.details.question) { this.question(c, d); return; }  // the model asks
      if (d.code === "answered") { this.questionAnswered(d); return; }
      if (d.code === "cancelled") { this.stopped(); this.line(d.message, "warn"); return; }
      if (d.code === "proposed" || d.code === "refused_call") {
        const call = (d.details && d.details.call) || {};
        const label = actionLabel(call.name, call.arguments, null, null);
        const why = /you said no to it/.test(d.message || "") ? ": you said no to it" : "";
        this.row(null, `${label} — ${d.code === "proposed" ? "proposed, not run" : "refused" + why}`, "skip", fields(call.arguments));
        return;
      }
      if (CHAT_NOTICES.has(d.code)) this.line(d.message);
    }

    row(id, label, cls, more) {
      const row = el("details", "action " + cls);
      const sum = el("summary");
      sum.append(el("span", "mark", { ok: "✓", bad: "✗", run: "…", skip: "–" }[cls] || "·"), el("span", "label", label), el("span", "note", ""));
      row.append(sum, more || el("div"));
      if (id) this.rows.set(id, row);
      return this.add(row);
    }

    action(c, d) {
      const a = d.arguments || {};
      const key = `${d.name}|${a.path || ""}`;
      const diff = this.diffs.get(key);
      const more = el("div", "more");
      if (diff) more.appendChild(diffBlock(diff));
      else if (a.content !== undefined) more.appendChild(el("pre", "fields", a.content));
      else more.appendChild(fields(a));
      const row = this.row(d.id, actionLabel(d.name, a, diff, null), "run", more);
      row.dataset.name = d.name; row.dataset.key = key;
      row.args = a;
    }

    result(c, d) {
      let row = this.rows.get(d.id);
      if (!row) row = this.row(d.id, actionLabel(d.name, {}, null, null), "run", el("div", "more"));
      const r = parse(d.content);
      const label = actionLabel(d.name, row.args || {}, this.diffs.get(row.dataset.key), r);
      row.className = "action " + (d.is_error ? "bad" : "ok");
      row.querySelector(".mark").textContent = d.is_error ? "✗" : "✓";
      row.querySelector(".label").textContent = label;
      row.querySelector(".note").textContent = resultNote(d.name, d.content, d.is_error);
      const more = row.querySelector(".more");
      if (r && "exit_code" in r) {
        more.appendChild(el("pre", "fields", [r.stdout, r.stderr].filter(Boolean).join("\n") || "(no output)"));
      } else if (d.name === "read_file" || d.is_error) {
        more.appendChild(el("pre", "fields", String(d.content).slice(0, 8000)));
      } else if (d.name === "list_files" && r && Array.isArray(r.entries)) {
        more.appendChild(el("pre", "fields", r.entries.join("\n") || "(empty)"));
      }
      this.event(c.time, (d.is_error ? "Failed: " : "") + label, d.is_error ? "bad" : "act");
      if (!d.is_error && CHANGES.has(d.name)) this.offerUndo(row, r && r.checkpoint);
    }

    approval(c, d) {
      const r = d.request || {}, op = r.operation || {};
      if (this.cards.has(d.job_id)) { this.again = true; this.hooks.attention(this.cards.get(d.job_id)); return; }
      const card = el("div", "card"); card.dataset.job = d.job_id;
      const headline = approvalHeadline(r);
      card.append(el("div", "ask", "Needs your approval"), el("strong", "headline", headline));
      if (r.rationale) card.appendChild(el("p", "why", r.rationale));
      if (r.hard_required && r.hard_required.length) card.appendChild(el("p", "hard", "You must decide this yourself: " + r.hard_required.join(", ")));
      if (r.diff_preview) { card.appendChild(diffBlock(r.diff_preview)); this.diffs.set(`${op.tool}|${(op.paths || [])[0] || ""}`, r.diff_preview); }
      else if (op.command) card.appendChild(el("pre", "fields", "$ " + op.command));
      const points = el("details", "points");
      points.appendChild(el("summary", "", "Impact, alternatives, risk"));
      const dl = el("dl");
      const risk = `${r.risk || "unknown"} risk${r.reversible === false ? ", cannot be undone" : r.reversible ? ", can be undone" : ""}`;
      for (const [k, v] of [["Impact", r.impact], ["Instead", r.alternatives], ["Risk", risk],
        ["Undo", r.rollback], ["Job", String(d.job_id).slice(0, 8)]]) if (v) dl.append(el("dt", "", k), el("dd", "", v));
      points.appendChild(dl); card.appendChild(points);
      const buttons = el("div", "buttons choices");
      const yes = el("button", "approve", "Approve"), no = el("button", "deny", "Deny…");
      yes.type = no.type = "button"; buttons.append(yes, no);
      const form = el("form", "deny-form"); form.hidden = true;
      const box = el("textarea"); box.rows = 2; box.placeholder = "Optional: your words go to Duckflow with the denial";
      const label = el("label", "instead", "What should it do instead?"); label.appendChild(box);
      const send = el("button", "deny", "Deny"), back = el("button", "", "Cancel");
      send.type = "submit"; back.type = "button";
      const fb = el("div", "buttons"); fb.append(send, back); form.append(label, fb);
      yes.onclick = () => this.hooks.decide(d.job_id, true, "", card);
      no.onclick = () => { buttons.hidden = true; form.hidden = false; box.focus(); this.hooks.attention(card); };
      back.onclick = () => { buttons.hidden = false; form.hidden = true; };
      box.addEventListener("keydown", (e) => { if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); form.requestSubmit(); } });
      form.onsubmit = (e) => { e.preventDefault(); this.hooks.decide(d.job_id, false, box.value.trim(), card); };
      card.append(buttons, form, el("p", "answer"));
      this.cards.set(d.job_id, card);
      this.add(card);
      this.event(c.time, "Approval asked: " + headline, "ask");
      this.hooks.attention(card);
    }

    question(c, d) {  // the model asks: its question, each option a button that answers with it
      const q = (d.details && d.details.question) || d.message, options = (d.details && d.details.options) || [];
      const card = el("div", "card question");
      card.append(el("div", "ask", "Duckflow asks"), el("strong", "headline", q));
      const buttons = el("div", "buttons choices");
      options.forEach((o, i) => {
        const b = el("button", "option", `${i + 1}. ${o}`); b.type = "button";
        b.onclick = () => { card.querySelectorAll("button").forEach((x) => (x.disabled = true)); this.hooks.command(o); };
        buttons.appendChild(b);
      });
      if (options.length) card.appendChild(buttons);
      card.appendChild(el("p", "why", options.length ? "Or type your own answer below." : "Type your answer below."));
      card.appendChild(el("p", "answer"));
      this.asking = card;
      this.add(card);
      this.event(c.time, "Question: " + clip(q, 60), "ask");
      this.hooks.attention(card);
    }

    questionAnswered(d) {
      const card = this.asking;
      if (!card) return;
      this.asking = null;
      card.classList.add("decided");
      card.querySelectorAll(".buttons, .why").forEach((n) => n.remove());
      card.querySelector(".answer").textContent = "Answered: " + (d.details && d.details.answer || "");
    }

    answered(c, d) {
      const card = this.cards.get(d.job_id);
      const who = d.by && !/^web(:page)?$/.test(d.by) ? ` (${d.by})` : "";
      const note = d.note || (card && card.note) || "";
      if (card) {
        card.classList.add("decided");
        card.querySelectorAll(".buttons, .deny-form").forEach((b) => b.remove());
        card.querySelector(".answer").textContent = (d.granted ? "Approved" : "Denied") + who + (note ? ` — “${note}”` : "");
      }
      this.event(c.time, (d.granted ? "Approved" : "Denied") + who, d.granted ? "ok" : "bad");
      this.hooks.answered();
    }

    open() { return [...this.cards.values()].filter((c) => !c.classList.contains("decided")); }
  }

  return { Conversation, el, clip, actionLabel, approvalHeadline, cleanReply };
})();

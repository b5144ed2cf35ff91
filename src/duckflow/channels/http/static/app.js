// Duckflow web page: chat with a session, streamed over SSE (fetch + a small parser, so the
// bearer token goes in a header and never into a URL), approvals, auto-approve, a timeline.
// Every text from the server is put in with textContent: model output is never HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const SHOWN_NOTICES = new Set(["auto_approved", "approval_stale", "proposed", "refused_call", "vitals",
  "plan_progress", "question", "constraint", "paused", "deviation", "plan_no_actions", "overwrite",
  "copied_example", "router", "queued", "images", "approval_refused", "approval"]);
const state = { token: sessionStorage.getItem("duckflow-token") || "", sid: "", lastSeq: 0,
  abort: null, bubble: null, streamed: false, retry: 0, cards: new Map(), plans: new Map() };

function el(tag, cls, text) {
  const n = document.createElement(tag);
  if (cls) n.className = cls;
  if (text !== undefined && text !== null) n.textContent = String(text);
  return n;
}

async function api(method, path, body) {
  const headers = { Authorization: "Bearer " + state.token };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const r = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (r.status === 401) { showLogin("The token was refused: sign in again."); throw new Error("401"); }
  const data = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(data.detail || r.statusText);
  return data;
}

// -- sign-in: a one-time code in the URL fragment (never sent to the server's logs) ------
async function signIn() {
  const m = location.hash.match(/code=([A-Za-z0-9_-]+)/);
  if (m) {
    history.replaceState(null, "", location.pathname);
    const r = await fetch("/auth/exchange", { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ code: m[1] }) });
    if (r.ok) { state.token = (await r.json()).token; sessionStorage.setItem("duckflow-token", state.token); }
    else { showLogin("This login link was already used. Paste the token, or restart the server for a new link."); return; }
  }
  if (!state.token) { showLogin(""); return; }
  $("login").hidden = true; $("main").hidden = false;
  await loadSessions();
  refreshAutoApprove(); setInterval(refreshAutoApprove, 10000);
}

function showLogin(msg) {
  $("login").hidden = false; $("main").hidden = true; $("login-error").textContent = msg;
  sessionStorage.removeItem("duckflow-token"); state.token = "";
}

$("login-form").addEventListener("submit", (e) => {
  e.preventDefault(); state.token = $("token").value.trim();
  sessionStorage.setItem("duckflow-token", state.token); $("token").value = ""; signIn();
});

// -- sessions ----------------------------------------------------------------------------
async function loadSessions(pick) {
  const data = await api("GET", "/v1/sessions");
  const sel = $("session"); sel.textContent = "";
  for (const s of data.sessions) {
    const o = el("option", "", `${s.session_id} · ${s.channel} · ${s.step}${s.pending ? " · approval" : ""}`);
    o.value = s.session_id; sel.appendChild(o);
  }
  let sid = pick || (data.sessions[0] && data.sessions[0].session_id);
  if (!sid) sid = (await api("POST", "/v1/sessions")).session_id, await loadSessions(sid);
  else { sel.value = sid; openSession(sid); }
}

$("new-session").addEventListener("click", async () => {
  const s = await api("POST", "/v1/sessions"); await loadSessions(s.session_id);
});
$("session").addEventListener("change", (e) => openSession(e.target.value));

function openSession(sid) {
  if (state.abort) state.abort.abort();
  Object.assign(state, { sid, lastSeq: 0, bubble: null, streamed: false, retry: 0 });
  state.cards.clear(); state.plans.clear();
  $("log").textContent = ""; $("timeline").textContent = ""; renderApprovals();
  follow();
}

// -- the stream: GET /events with Last-Event-ID; reconnect and resume after a drop -------
async function follow() {
  const sid = state.sid, ctl = new AbortController();
  state.abort = ctl;
  try {
    const headers = { Authorization: "Bearer " + state.token, Accept: "text/event-stream" };
    if (state.lastSeq) headers["Last-Event-ID"] = String(state.lastSeq);
    const r = await fetch(`/v1/sessions/${encodeURIComponent(sid)}/events`, { headers, signal: ctl.signal });
    if (r.status === 401) { showLogin("The token was refused: sign in again."); return; }
    if (!r.ok || !r.body) throw new Error("stream refused: " + r.status);
    setConn(true); state.retry = 0;
    const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += value;
      let i;
      while ((i = buf.indexOf("\n\n")) >= 0) { frame(buf.slice(0, i)); buf = buf.slice(i + 2); }
      buf = buf.replace(/\r/g, "");
    }
  } catch (err) { /* dropped: resume below */ }
  if (state.sid !== sid || state.abort !== ctl) return;  // another session took over
  setConn(false);
  state.retry = Math.min(state.retry + 1, 6);
  setTimeout(() => { if (state.sid === sid && state.abort === ctl) follow(); }, 250 * 2 ** (state.retry - 1));
}

function frame(text) {
  let id = null, data = "", event = "message";
  for (const line of text.split("\n")) {
    if (line.startsWith(":")) continue;  // heartbeat
    const k = line.indexOf(":"); if (k < 0) continue;
    const name = line.slice(0, k), val = line.slice(k + 1).replace(/^ /, "");
    if (name === "id") id = Number(val); else if (name === "data") data += val; else if (name === "event") event = val;
  }
  if (event === "gap") { addLine("older messages of this session are no longer kept", "error"); return; }
  if (event !== "chunk" || id === null) return;
  if (id <= state.lastSeq) return;  // already shown: no duplicates after a resume
  if (id !== state.lastSeq + 1 && state.lastSeq) { state.abort.abort(); return; }  // a gap: resume from lastSeq
  state.lastSeq = id;
  show(JSON.parse(data));
}

function setConn(on) { const c = $("conn"); c.textContent = on ? "live" : "reconnecting…"; c.className = "conn " + (on ? "on" : "off"); }

// -- rendering one chunk -----------------------------------------------------------------
function show(c) {
  timeline(c);
  const d = c.data || {};
  switch (c.type) {
    case "notice":  // the chat shows what the CLI shows by default; the timeline keeps every notice
      if (d.code === "route") addLine(`route ${d.details && d.details.primary_route} (${d.details && d.details.source})`, "route");
      else if (SHOWN_NOTICES.has(d.code) || String(d.message).includes("could not")) addLine("ℹ " + d.message);
      break;
    case "delta": bubble().textContent += d.text; state.streamed = true; scroll(); break;
    case "reply": { const b = bubble(); b.textContent = d.text; b.classList.remove("streaming"); state.bubble = null; state.streamed = false; break; }
    case "decision": addLine("● " + d.rationale + `  [${d.step} · ${d.pattern}]`); break;
    case "state": addLine(`↪ ${d.from_step} → ${d.to_step}${d.allowed ? "" : " (refused)"}`); break;
    case "plan": plan(d); break;
    case "tool_call": addLine(`→ ${d.name} ${d.arguments && d.arguments.path ? d.arguments.path : ""}`, "tool"); break;
    case "tool_response": addLine(`${d.is_error ? "✗" : "✓"} ${d.name}: ${String(d.content).slice(0, 300)}`, "tool " + (d.is_error ? "bad" : "ok")); break;
    case "approval": d.phase === "answer" ? answered(d) : approval(d); break;
    case "progress": $("activity").textContent = d.phase === "start" ? `working: ${d.what}` : ""; break;
    case "error": addLine(`error: ${d.message}${d.hint ? " — " + d.hint : ""}`, "error"); break;
    case "warning": addLine(`⚠ ${d.message}`, "error"); break;
    case "done":
      $("activity").textContent = ""; $("send").disabled = false;
      if (state.bubble) { state.bubble.classList.remove("streaming"); state.bubble = null; }
      addLine(`— ${d.ending || "done"}${d.text && d.ending !== "input" ? ": " + d.text : ""}`);
      break;
  }
}

function bubble() {
  if (!state.bubble) { state.bubble = el("div", "msg bot streaming"); $("log").appendChild(state.bubble); }
  return state.bubble;
}
function addLine(text, cls) { $("log").appendChild(el("div", "line " + (cls || ""), text)); scroll(); }
function scroll() { const l = $("log"); l.scrollTop = l.scrollHeight; }

function plan(d) {  // a plan's later chunks (approved, each action done/failed) update its one box
  let box = state.plans.get(d.plan_id);
  const fresh = !box;
  if (fresh) { box = el("div", "plan"); state.plans.set(d.plan_id, box); }
  box.textContent = "";
  box.appendChild(el("strong", "", `plan ${d.plan_id} (${d.status})`));
  if (d.text) box.appendChild(el("div", "", d.text));
  if (d.actions && d.actions.length) {
    const ul = el("ul");
    d.actions.forEach((a, i) => ul.appendChild(el("li", "", `${a}${d.states && d.states[i] ? " — " + d.states[i] : ""}`)));
    box.appendChild(ul);
  }
  if (fresh) { $("log").appendChild(box); scroll(); }
}

function timeline(c) {
  const d = c.data || {};
  const what = d.text || d.message || d.rationale || d.name || d.what || d.reason || d.job_id || "";
  const li = el("li");
  li.append(el("span", "seq", c.seq), el("span", "", (c.time || "").slice(11, 19)), el("span", "type", c.type),
    el("span", "what", String(what).slice(0, 120)));
  li.title = JSON.stringify(c).slice(0, 2000);
  $("timeline").appendChild(li);
}

// -- approvals: five points, the diff, approve / deny ---------------------------------------
function approval(d) {
  const r = d.request || {};
  const card = el("div", "card"); card.dataset.job = d.job_id;
  card.appendChild(el("strong", "", `Approval needed · job ${String(d.job_id).slice(0, 8)}`));
  const dl = el("dl");
  for (const [k, v] of [["Intent", r.intent], ["Why", r.rationale], ["Impact", r.impact],
    ["Alternatives", Array.isArray(r.alternatives) ? r.alternatives.join("; ") : r.alternatives],
    ["Risk", `${r.risk || "?"}${r.reversible === false ? " · not reversible" : r.reversible ? " · reversible" : ""}`]]) {
    dl.append(el("dt", "", k), el("dd", "", v || "—"));
  }
  card.appendChild(dl);
  if (r.hard_required && r.hard_required.length) card.appendChild(el("div", "hard", "a person must decide: " + r.hard_required.join(", ")));
  if (r.diff_preview) card.appendChild(diff(r.diff_preview));
  const buttons = el("div", "buttons");
  const yes = el("button", "approve", "Approve"), no = el("button", "deny", "Deny");
  yes.type = no.type = "button";
  yes.onclick = () => decide(d.job_id, true, card); no.onclick = () => decide(d.job_id, false, card);
  buttons.append(yes, no); card.appendChild(buttons);
  state.cards.set(d.job_id, card); renderApprovals();
  addLine(`‖ approval needed: ${r.intent || r.summary || d.job_id}`, "error");
}

function diff(text) {
  const pre = el("pre", "diff");
  for (const line of String(text).split("\n")) {
    const cls = line.startsWith("+") && !line.startsWith("+++") ? "add" : line.startsWith("-") && !line.startsWith("---") ? "del" : line.startsWith("@@") ? "hunk" : "";
    const span = el("span", cls, line + "\n"); pre.appendChild(span);
  }
  return pre;
}

async function decide(job, granted, card) {
  card.querySelectorAll("button").forEach((b) => (b.disabled = true));
  try { await api("POST", `/v1/approvals/${encodeURIComponent(job)}/${granted ? "grant" : "deny"}`, { by: "page" }); }
  catch (err) { card.appendChild(el("div", "error", "could not send: " + err.message)); card.querySelectorAll("button").forEach((b) => (b.disabled = false)); }
}

function answered(d) {
  const card = state.cards.get(d.job_id);
  if (card) {
    card.classList.add("decided");
    card.querySelectorAll("button").forEach((b) => b.remove());
    card.appendChild(el("div", "muted", `${d.granted ? "approved" : "denied"} by ${d.by || "?"}`));
  }
  addLine(`${d.granted ? "✔ approved" : "✘ denied"} by ${d.by || "?"}`);
  renderApprovals();
}

function renderApprovals() {
  const box = $("approvals"); box.textContent = "";
  const open = [...state.cards.values()];
  if (!open.length) box.appendChild(el("p", "muted", "nothing waits for you"));
  open.reverse().forEach((c) => box.appendChild(c));
}

// -- sending -------------------------------------------------------------------------------
$("send-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const text = $("text").value.trim(); if (!text || !state.sid) return;
  $("text").value = ""; $("send").disabled = true;
  $("log").appendChild(el("div", "msg user", text)); scroll();
  const file = $("image").files[0];
  try {
    const body = { text };
    if (file) {  // the image goes first (POST /v1/images, typed by its content), the message names it
      const r = await fetch("/v1/images", { method: "POST", body: file,
        headers: { Authorization: "Bearer " + state.token, "Content-Type": file.type || "application/octet-stream" } });
      const up = await r.json().catch(() => ({}));
      if (!r.ok) throw new Error(up.detail || r.statusText);
      body.images = [up.image]; $("image").value = "";
    }
    await api("POST", `/v1/sessions/${encodeURIComponent(state.sid)}/messages`, body);
  }
  catch (err) { addLine("could not send: " + err.message, "error"); $("send").disabled = false; }
});
$("text").addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); $("send-form").requestSubmit(); }
});

// -- auto-approve switch (scope + TTL; off at once) ----------------------------------------
async function refreshAutoApprove() {
  try {
    const s = await api("GET", "/v1/autoapprove");
    $("aa-on").checked = !!s.enabled;
    $("aa-state").textContent = s.enabled ? `on: ${(s.scope && s.scope.paths || []).join(" ")} until ${String(s.expires_at).slice(11, 16)}` : "off";
  } catch (err) { /* shown by the login screen when it is the token */ }
}
$("aa-on").addEventListener("change", async (e) => {
  try {
    if (e.target.checked) {
      const paths = $("aa-paths").value.split(/\s+/).filter(Boolean);
      await api("POST", "/v1/autoapprove", { paths, ttl_min: Number($("aa-ttl").value) || 30, by: "page" });
    } else { await api("DELETE", "/v1/autoapprove"); }
  } catch (err) { addLine("auto-approve: " + err.message, "error"); }
  refreshAutoApprove();
});

window.duckflowPage = { state, drop: () => state.abort && state.abort.abort() };
signIn();

// Duckflow web page: sign-in, conversations (sessions), the live stream over SSE (fetch + a small
// parser), sending, Stop, approving and auto-approve. What the stream shows a person is talk.js's job.
// Signed in = the browser holds the server's HttpOnly, SameSite=Strict cookie (every tab sends it;
// this script never sees it nor the token); a request that changes something adds X-Duckflow-Page.
"use strict";

const $ = (id) => document.getElementById(id);
const { el } = Talk;
const state = { sid: "", lastSeq: 0, abort: null, retry: 0, talk: null, sessions: [], timer: null,
  workspace: "", busy: false };
const PAGE = { "X-Duckflow-Page": "1" };
sessionStorage.removeItem("duckflow-token");  // what an older page kept: the cookie replaces it

async function api(method, path, body) {
  const headers = { ...PAGE };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const r = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (r.status === 401) { showLogin(state.signedIn ? "You were signed out: sign in again." : ""); throw new Error("signed out"); }
  const data = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(data.detail || r.statusText);
  return data;
}

// -- sign-in: a one-time code in the URL fragment (never sent to the server's logs) ------
async function auth(path, body) {
  return fetch(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body || {}) });
}

async function signIn() {
  const m = location.hash.match(/code=([A-Za-z0-9_-]+)/);
  if (m) {
    history.replaceState(null, "", location.pathname);
    const r = await auth("/auth/exchange", { code: m[1] });
    if (!r.ok) {  // a used link: this browser may be signed in already (another tab used it)
      try { await fetch("/v1/sessions").then((x) => { if (!x.ok) throw new Error(); }); }
      catch (err) { showLogin("This login link was already used. Paste the token, or restart the server for a new link."); return; }
    }
  }
  try { await loadSessions(); } catch (err) { return; }
  state.signedIn = true;
  $("login").hidden = true; $("app").hidden = false;
  api("GET", "/v1/status").then((s) => { state.workspace = s.workspace || ""; welcome(); }).catch(() => {});
  refreshAutoApprove();
  clearInterval(state.timer);
  state.timer = setInterval(() => { refreshAutoApprove(); loadSessions(state.sid, true).catch(() => {}); }, 15000);
}

function showLogin(msg) {  // signed out: nothing but the form
  if (state.abort) state.abort.abort();
  clearInterval(state.timer);
  Object.assign(state, { sid: "", abort: null, signedIn: false });
  $("app").hidden = true; $("login").hidden = false; $("login-error").textContent = msg;
}

$("login-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const token = $("token").value.trim(); $("token").value = "";
  if (!token) return;
  const r = await auth("/auth/login", { token });
  if (!r.ok) { showLogin("That is not this server's token. It is in $DUCKFLOW_HOME/server-token (or DUCKFLOW_SERVER_TOKEN)."); return; }
  signIn();
});
$("sign-out").addEventListener("click", async () => {
  await auth("/auth/logout").catch(() => {});
  showLogin("Signed out. Every tab of this browser is signed out too.");
});

// -- conversations: named by their request and time, with where they stand in plain words --
function when(seconds) {
  const d = new Date(seconds * 1000), now = new Date();
  const hm = d.toTimeString().slice(0, 5);
  return d.toDateString() === now.toDateString() ? hm : `${d.toLocaleDateString(undefined, { month: "short", day: "numeric" })} ${hm}`;
}

async function loadSessions(pick, quiet) {
  const data = await api("GET", "/v1/sessions");
  $("login").hidden = true; $("app").hidden = false;
  state.sessions = data.sessions;
  const sel = $("session"); sel.textContent = "";
  for (const s of data.sessions) {
    const o = el("option", "", `${s.title} · ${when(s.created_at || s.updated_at)}${s.state ? " — " + s.state : ""}`);
    o.value = s.session_id; sel.appendChild(o);
  }
  let sid = pick || (data.sessions[0] && data.sessions[0].session_id);
  if (!sid) { sid = (await api("POST", "/v1/sessions")).session_id; return loadSessions(sid); }
  sel.value = sid;
  if (!quiet || sid !== state.sid) openSession(sid);
}

$("new-session").addEventListener("click", async () => {
  try { const s = await api("POST", "/v1/sessions"); await loadSessions(s.session_id); }
  catch (err) { if (state.talk) state.talk.line("Could not start a new conversation: " + err.message, "error"); }
});
$("session").addEventListener("change", (e) => openSession(e.target.value));

function openSession(sid) {
  if (state.abort) state.abort.abort();
  Object.assign(state, { sid, lastSeq: 0, retry: 0, abort: null });
  $("log").textContent = ""; $("timeline").textContent = ""; $("send").disabled = false; busy(false);
  state.talk = new Talk.Conversation($("log"), $("timeline"), hooks);
  follow();
  api("GET", `/v1/sessions/${encodeURIComponent(sid)}`).then((s) => {
    if (state.sid === sid && !s.last_seq && !state.lastSeq) { state.empty = sid; welcome(); }
  }).catch(() => {});
}

// -- the first screen of an empty conversation: what Duckflow does here, and examples to click --
const EXAMPLES = ["What is in this folder, and what does it do?", "Create hello.py that prints a greeting",
  "Find the TODO comments and list them by file"];
function welcome() {
  const old = $("welcome");
  if (old) old.remove();
  if (state.empty !== state.sid || state.lastSeq) return;
  const box = el("section", "welcome"); box.id = "welcome";
  const where = state.workspace ? state.workspace.split("/").filter(Boolean).pop() || state.workspace : "this folder";
  box.append(el("h2", "", "What Duckflow can do here"));
  const p = el("p", "", `It works on the files in `);
  const w = el("code", "", where); w.title = state.workspace; p.append(w, el("span", "",
    " on this machine: it reads them, answers questions about them, and writes or runs something only after you approve it. A file it changed can be put back with one click (or /undo)."));
  box.append(p, el("p", "muted", "Try one:"));
  const list = el("div", "examples");
  for (const text of EXAMPLES) {
    const b = el("button", "example", text); b.type = "button";
    b.onclick = () => { $("text").value = text; $("send-form").requestSubmit(); };
    list.appendChild(b);
  }
  box.append(list, el("p", "muted", "Type /help for the commands: /undo, /diff, /status, /model."));
  $("log").prepend(box);
}

// -- scrolling: follow the end unless the person scrolled up; say what waits below ----------
const log = $("log");
function nearBottom() { return log.scrollHeight - log.scrollTop - log.clientHeight < 80; }
function toEnd() { log.scrollTop = log.scrollHeight; }
function visible(node) {
  const a = node.getBoundingClientRect(), b = log.getBoundingClientRect();
  return a.bottom > b.top + 20 && a.top < b.bottom - 20;
}
function pill() {
  const open = state.talk ? state.talk.open() : [];
  const hidden = open.filter((c) => !visible(c));
  const jump = $("jump");
  if (hidden.length) { jump.textContent = "An approval is waiting ↓"; jump.hidden = false; }
  else if (!nearBottom() && state.unseen) { jump.textContent = "New messages ↓"; jump.hidden = false; }
  else { jump.hidden = true; if (nearBottom()) state.unseen = false; }
}
log.addEventListener("scroll", pill);
$("jump").addEventListener("click", () => {
  const open = state.talk.open();
  if (open.length) open[open.length - 1].scrollIntoView({ block: "end" }); else toEnd();
  state.unseen = false; pill();
});

function busy(on) {  // while a turn runs, Stop stands where Send was
  state.busy = on;
  $("stop").hidden = !on; $("send").hidden = on;
  $("stop").disabled = false; $("stop").textContent = "Stop";
}

async function stop() {
  $("stop").disabled = true; $("stop").textContent = "Stopping…";
  try { await api("POST", `/v1/sessions/${encodeURIComponent(state.sid)}/stop`); }
  catch (err) { state.talk.line("Could not stop: " + err.message, "error"); busy(state.busy); }
}
$("stop").addEventListener("click", stop);

async function send(text) {
  state.talk.mine(text); toEnd();
  await api("POST", `/v1/sessions/${encodeURIComponent(state.sid)}/messages`, { text });
}

const hooks = {
  nearBottom,
  busy,
  command(text) { send(text).catch((err) => state.talk.line("Could not send: " + err.message, "error")); },
  added(stick) { if (stick) toEnd(); else state.unseen = true; pill(); },
  attention(card) { card.scrollIntoView({ block: "end" }); if (card.getBoundingClientRect().top < log.getBoundingClientRect().top) card.scrollIntoView({ block: "start" }); pill(); },
  decide,
  answered() { loadSessions(state.sid, true).catch(() => {}); pill(); },
  done() { $("send").disabled = false; loadSessions(state.sid, true).catch(() => {}); pill(); hooks.refreshUndo(); },
  refreshUndo() {  // the change rows' Undo / Redo, from the checkpoints as they are now (a few per second at most)
    clearTimeout(state.undoTimer);
    state.undoTimer = setTimeout(async () => {
      const talk = state.talk;
      try { const data = await api("GET", "/v1/undo?limit=200"); if (talk === state.talk) talk.undoStates(data.checkpoints || []); }
      catch (err) { /* signed out or away: the buttons stay as they were */ }
    }, 150);
  },
};

async function decide(job, granted, note, card) {
  card.querySelectorAll("button, textarea").forEach((b) => (b.disabled = true));
  card.note = note;
  const body = { by: "page" };
  if (note) body.note = note;
  try { await api("POST", `/v1/approvals/${encodeURIComponent(job)}/${granted ? "grant" : "deny"}`, body); }
  catch (err) {
    card.querySelector(".answer").textContent = "Could not send your answer: " + err.message + ". Try again.";
    card.querySelectorAll("button, textarea").forEach((b) => (b.disabled = false));
  }
}

// -- the stream: GET /events with Last-Event-ID; reconnect and resume after a drop -------
async function follow() {
  const sid = state.sid, ctl = new AbortController();
  state.abort = ctl;
  try {
    const headers = { Accept: "text/event-stream" };
    if (state.lastSeq) headers["Last-Event-ID"] = String(state.lastSeq);
    const r = await fetch(`/v1/sessions/${encodeURIComponent(sid)}/events`, { headers, signal: ctl.signal });
    if (r.status === 401) { showLogin("You were signed out: sign in again."); return; }
    if (!r.ok || !r.body) throw new Error("stream refused: " + r.status);
    setConn(true); state.retry = 0;
    const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += value.replace(/\r/g, "");
      let i;
      while ((i = buf.indexOf("\n\n")) >= 0) { frame(buf.slice(0, i)); buf = buf.slice(i + 2); }
    }
  } catch (err) { /* dropped: resume below */ }
  if (state.sid !== sid || state.abort !== ctl) return;  // another conversation took over
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
  if (event === "gap") { state.talk.line("The start of this conversation is no longer kept.", "muted"); return; }
  if (event !== "chunk" || id === null) return;
  if (id <= state.lastSeq) return;  // already shown: no duplicates after a resume
  if (id !== state.lastSeq + 1 && state.lastSeq) { state.abort.abort(); return; }  // a gap: resume from lastSeq
  state.lastSeq = id;
  if (state.empty === state.sid) { state.empty = ""; welcome(); }
  state.talk.show(JSON.parse(data));
}

function setConn(on) {
  const c = $("conn"); c.className = "conn " + (on ? "on" : "off");
  c.textContent = on ? "" : "reconnecting…"; c.setAttribute("aria-label", on ? "connected" : "reconnecting");
}

// -- sending -------------------------------------------------------------------------------
$("send-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const text = $("text").value.trim(); if (!text || !state.sid) return;
  $("text").value = "";
  if (state.busy && /^(stop|\/cancel|止めて)$/i.test(text)) { stop(); return; }  // "stop" while it works: Stop
  $("send").disabled = true;
  state.talk.mine(text); toEnd();
  const file = $("image").files[0];
  try {
    const body = { text };
    if (file) {  // the image goes first (POST /v1/images, typed by its content), the message names it
      const r = await fetch("/v1/images", { method: "POST", body: file,
        headers: { ...PAGE, "Content-Type": file.type || "application/octet-stream" } });
      const up = await r.json().catch(() => ({}));
      if (!r.ok) throw new Error(up.detail || r.statusText);
      body.images = [up.image]; $("image").value = "";
    }
    await api("POST", `/v1/sessions/${encodeURIComponent(state.sid)}/messages`, body);
  }
  catch (err) { state.talk.line("Could not send: " + err.message, "error"); $("send").disabled = false; }
});
$("text").addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); $("send-form").requestSubmit(); }
});

// -- the switches: details (the raw trace), the side panel ---------------------------------
function toggle(button, cls) {
  const on = document.body.classList.toggle(cls);
  button.setAttribute("aria-pressed", String(on));
  if (cls === "details") toEnd();
}
$("details-toggle").addEventListener("click", (e) => toggle(e.currentTarget, "details"));
$("panel-toggle").addEventListener("click", (e) => toggle(e.currentTarget, "panel-open"));

// -- auto-approve switch (scope + TTL; off at once) ----------------------------------------
async function refreshAutoApprove() {
  try {
    const s = await api("GET", "/v1/autoapprove");
    $("aa-on").checked = !!s.enabled;
    $("aa-state").textContent = s.enabled ? `on for ${(s.scope && s.scope.paths || []).join(" ")} until ${new Date(s.expires_at).toTimeString().slice(0, 5)}` : "off";
  } catch (err) { /* the sign-in form says so when it is the token */ }
}
$("aa-on").addEventListener("change", async (e) => {
  try {
    if (e.target.checked) {
      const paths = $("aa-paths").value.split(/\s+/).filter(Boolean);
      await api("POST", "/v1/autoapprove", { paths, ttl_min: Number($("aa-ttl").value) || 30, by: "page" });
    } else { await api("DELETE", "/v1/autoapprove"); }
  } catch (err) { $("aa-state").textContent = "could not switch: " + err.message; }
  refreshAutoApprove();
});

window.duckflowPage = { state, drop: () => state.abort && state.abort.abort() };
signIn();

// The words and small pieces the web page shows for the engine's chunks, with no state: one line per
// action ("Edit calc.py (+2 −0)", "Run pytest → exit 0, 3 lines"), the approval card's headline, a reply
// without what the page shows elsewhere, a diff block, key: value fields. talk.js builds the conversation
// with them. Text always goes in with textContent: nothing here is ever HTML.
"use strict";

const Words = (() => {
  function el(tag, cls, text) {
    const n = document.createElement(tag);
    if (cls) n.className = cls;
    if (text !== undefined && text !== null) n.textContent = String(text);
    return n;
  }
  const clip = (s, n) => { s = String(s || "").replace(/\s+/g, " ").trim(); return s.length > n ? s.slice(0, n - 1) + "…" : s; };
  const lineCount = (t) => (t ? String(t).replace(/\n$/, "").split("\n").length : 0);
  const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
  const clock = (iso) => { const d = iso ? new Date(iso) : new Date(); return d.toTimeString().slice(0, 8); };
  const parse = (s) => { try { const v = JSON.parse(s); return v && typeof v === "object" ? v : null; } catch (e) { return null; } };

  function diffCounts(diff) {
    let add = 0, del = 0;
    for (const l of String(diff || "").split("\n")) {
      if (l.startsWith("+") && !l.startsWith("+++")) add++;
      else if (l.startsWith("-") && !l.startsWith("---")) del++;
    }
    return { add, del };
  }
  const pm = (c) => `(+${c.add} −${c.del})`;

  function blockCounts(content) {  // SEARCH/REPLACE blocks: lines added and removed, by a small LCS
    const re = /<{5,9} ?SEARCH[^\n]*\n([\s\S]*?)\n?={5,9}\n([\s\S]*?)\n?>{5,9} ?REPLACE/g;
    let m, add = 0, del = 0, found = false;
    while ((m = re.exec(String(content || "")))) {
      found = true;
      const a = m[1] ? m[1].split("\n") : [], b = m[2] ? m[2].split("\n") : [];
      if (a.length * b.length > 40000) { add += b.length; del += a.length; continue; }
      let prev = new Array(b.length + 1).fill(0);
      for (let i = 1; i <= a.length; i++) {
        const row = [0];
        for (let j = 1; j <= b.length; j++) row[j] = a[i - 1] === b[j - 1] ? prev[j - 1] + 1 : Math.max(prev[j], row[j - 1]);
        prev = row;
      }
      add += b.length - prev[b.length]; del += a.length - prev[b.length];
    }
    return found ? { add, del } : null;
  }

  // one line per action: "Edit calc.py (+2 −0)", "Run python3 hello.py → exit 0, 15 lines"
  function actionLabel(name, a, diff, result) {
    a = a || {};
    const counts = diff ? diffCounts(diff) : null;
    switch (name) {
      case "read_file": return `Read ${a.path}${a.start_line ? ` (lines ${a.start_line}–${a.end_line || "end"})` : ""}`;
      case "list_files": return a.path && a.path !== "." ? `List ${a.path}` : "List the files";
      case "search_code": return `Search for “${clip(a.query, 40)}”`;
      case "write_file": {
        const created = result ? result.created : String(diff || "").startsWith("--- /dev/null");
        if (created) return `Create ${a.path} (+${counts ? counts.add : lineCount(a.content)})`;
        return counts ? `Edit ${a.path} ${pm(counts)}` : `Rewrite ${a.path} (${plural(lineCount(a.content), "line")})`;
      }
      case "edit_file": {
        const c = counts || blockCounts(a.content);
        return c ? `Edit ${a.path} ${pm(c)}` : `Rewrite ${a.path} (${plural(lineCount(a.content), "line")})`;
      }
      case "execute_shell": return `Run ${clip(a.command, 60)}`;
      case "run_tests": return a.command ? `Run the tests (${clip(a.command, 40)})` : "Run the tests";
      case "create_directory": return `Create folder ${a.path}`;
      case "delete_path": return `Delete ${a.path}`;
      case "move_path": return `Move ${a.src} to ${a.dst}`;
      default: return `${name} ${clip(Object.values(a).filter((v) => typeof v !== "object").join(" "), 50)}`.trim();
    }
  }

  function resultNote(name, content, isError) {
    if (isError) return " → failed: " + clip(String(content).split("\n")[0], 90);
    const r = parse(content);
    if (r && "exit_code" in r) {
      if (r.ran === false) return " → not run" + (r.advice ? ": " + clip(r.advice, 80) : "");
      if (r.timed_out) return " → timed out";
      const out = lineCount(r.stdout) + lineCount(r.stderr);
      return ` → exit ${r.exit_code}${out ? ", " + plural(out, "line") : ""}`;
    }
    if (name === "list_files" && r && Array.isArray(r.entries)) return r.entries.length ? ` → ${plural(r.entries.length, "entry")}` : " → empty";
    if (name === "search_code" && r && Array.isArray(r.results)) return ` → ${plural(r.results.length, "match")}`;
    return "";
  }

  function approvalHeadline(r) {
    const op = r.operation || {}, paths = op.paths || [], path = paths[0] || "";
    const diff = r.diff_preview || "", c = diffCounts(diff);
    switch (op.tool) {
      case "write_file": {
        const base = (op.extra && op.extra.base) || {};
        if (base[path] === "absent" || diff.startsWith("--- /dev/null")) return `Create ${path} — ${plural(c.add, "line")}`;
        return `Change ${path} ${pm(c)}`;
      }
      case "edit_file": return `Edit ${path} ${pm(c)}`;
      case "execute_shell": return `Run ${clip(op.command, 80)}`;
      case "run_tests": return op.command ? `Run the tests: ${clip(op.command, 60)}` : "Run the tests";
      case "delete_path": return `Delete ${paths.join(", ")}`;
      case "move_path": return `Move ${paths[0]} to ${paths[1] || "?"}`;
      case "create_directory": return `Create folder ${path}`;
      case "apply_patch": return `Edit ${paths.join(", ")} ${pm(c)}`;
      default: return clip(r.summary || r.intent || "Allow this action?", 90);
    }
  }

  // a reply's text without what the page shows elsewhere: plan ids, tool results, the approval line
  function cleanReply(text) {
    return String(text || "").split(/\n\n+/).filter((p) => {
      const t = p.trim();
      if (!t || /^\(plan [\w-]+ \w+\)$/.test(t) || /^Waiting for your approval: job /.test(t)) return false;
      return !t.split("\n").every((l) => /^- \w+\(.*\) → /.test(l));
    }).join("\n\n").trim();
  }

  function diffBlock(text) {
    const pre = el("pre", "diff");
    for (const line of String(text).replace(/\n$/, "").split("\n")) {
      if (/^(---|\+\+\+) |^@@ -0,0 /.test(line)) continue;  // the file is named in the headline; a new file has one hunk
      const cls = line.startsWith("+") && !line.startsWith("+++") ? "add" : line.startsWith("-") && !line.startsWith("---") ? "del" : line.startsWith("@@") ? "hunk" : "";
      pre.appendChild(el("span", cls, line + "\n"));
    }
    return pre;
  }

  function fields(obj) {  // key: value lines (never JSON) for an action's expanded details
    const pre = el("pre", "fields");
    pre.textContent = Object.entries(obj || {}).filter(([, v]) => v !== null && v !== "" && v !== undefined)
      .map(([k, v]) => `${k}: ${typeof v === "object" ? JSON.stringify(v) : v}`).join("\n");
    return pre;
  }

  return { el, clip, lineCount, plural, clock, parse, diffCounts, pm, blockCounts, actionLabel, resultNote, approvalHeadline, cleanReply, diffBlock, fields };
})();
